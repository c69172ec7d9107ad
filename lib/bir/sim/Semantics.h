//===- Semantics.h - Element semantics of the BIR instructions -----------===//
//
// docs/bir.md, "What each instruction reads and writes", over operands that
// have been gathered into contiguous buffers in element order. Values are
// converted with convert(v, T) of docs/bir.md "Data types": round to
// nearest even, infinity beyond the largest finite value (fp8e4m3 saturates
// to +-448), NaN stays NaN; integers round to nearest even, saturate, NaN
// becomes 0.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_BIR_SIM_SEMANTICS_H
#define LOOM_LIB_BIR_SIM_SEMANTICS_H

#include "Storage.h"

#include "loom/bir/ir/Instructions.h"

#include <string>

namespace loom::bir::sim {

/// The exact value of the element at P.
double loadValue(DataType T, const uint8_t *P);
/// fp32(v) of the element at P.
float loadF32(DataType T, const uint8_t *P);
/// Stores convert(V, T).
void storeValue(DataType T, double V, uint8_t *P);
/// Stores convert(V, T) of an fp32 value (one rounding).
void storeF32(DataType T, float V, uint8_t *P);
/// The element at P for messages ("1.5", "-3").
std::string formatElement(DataType T, const uint8_t *P);

/// Copies the elements Op selects, in element order, into Out (resized).
/// Returns the storage byte offset of the first uninitialized byte read, if
/// any (then Out is incomplete).
std::optional<uint64_t> gather(const Storage &S, const RunShape &Shape,
                               std::vector<uint8_t> &Out);
/// Writes Src (element order) to the elements Shape selects and marks them
/// initialized. A repeated element keeps the last value written.
void scatter(Storage &S, const RunShape &Shape, const uint8_t *Src);

/// Copies the elements of Src's Shape to those of Dst's (same element count
/// and type; different storages), run against run, without a staging
/// buffer. Returns the offset of the first uninitialized byte read, if any.
std::optional<uint64_t>
copyRuns(const Storage &Src, const RunShape &SrcShape, Storage &Dst,
         const RunShape &DstShape,
         std::vector<std::pair<uint64_t, uint64_t>> &Scratch);

/// out[e] = convert(in[e], To).
void convertElements(DataType From, const uint8_t *In, DataType To,
                     uint8_t *Out, uint64_t N);
/// f(X) of a floating-point Activation, in fp32 (docs/bir.md "Activation").
float activationF32(ActivationFunc F, float X);
/// A op B of a floating-point TensorTensor, in fp32; a comparison gives 1 or
/// 0 (docs/bir.md "TensorTensor").
float applyArith(ArithOp Op, float A, float B);
/// out[e] = convert(f(in[e] * scale), To); exact in the integer type when
/// From == To is an integer type and f has an integer form.
void activation(ActivationFunc F, double Scale, DataType From,
                const uint8_t *In, DataType To, uint8_t *Out, uint64_t N);
/// out[e] = convert(in0[e] op in1[e], To): exact with XLA's integer rules
/// when both inputs have one integer type, in fp32 otherwise.
void tensorTensor(ArithOp Op, DataType T0, const uint8_t *In0, DataType T1,
                  const uint8_t *In1, DataType To, uint8_t *Out, uint64_t N);
/// out[e] = pred[e] != 0 ? on_true[e] : on_false[e], the bytes of type T.
void selectElements(const uint8_t *Pred, const uint8_t *OnTrue,
                    const uint8_t *OnFalse, DataType T, uint8_t *Out,
                    uint64_t N);
/// out[e] = XLA's convert of in[e] (docs/bir.md "TensorConvert").
void tensorConvert(DataType From, const uint8_t *In, DataType To, uint8_t *Out,
                   uint64_t N);
/// For each of Groups output elements j: acc = Accumulate ? Out[j] :
/// convert(Init, TO); acc = op(acc, In[j * G + i]) for i = 0 .. G-1, each
/// step stored in TO; Out[j] = acc.
void tensorReduce(ArithOp Op, DataType TI, const uint8_t *In, DataType TO,
                  uint8_t *Out, uint64_t Groups, uint64_t G, bool Accumulate,
                  double Init);
/// The values of an Iota over Partitions partitions of Pattern, in element
/// order.
void iotaElements(int64_t Start, int64_t PartitionStep,
                  llvm::ArrayRef<int64_t> Multipliers,
                  llvm::ArrayRef<PatternDim> Pattern, unsigned Partitions,
                  DataType T, uint8_t *Out);
void memsetElements(double Value, DataType To, uint8_t *Out, uint64_t N);
/// The output elements of a Select, TensorConvert, TensorReduce or Iota
/// from its gathered inputs In (in operand order); Out holds the gathered
/// output when a TensorReduce accumulates.
void computeElements(const Instruction &I, llvm::ArrayRef<const uint8_t *> In,
                     uint8_t *Out);
/// Acc[e] = convert(fp32(Acc[e]) + fp32(In[e]), T).
void accumulate(DataType T, const uint8_t *In, uint8_t *Acc, uint64_t N);
/// o[m][n] = fold over k upwards of o + x[k][n] * s[k][m] in fp32, starting
/// from o (Accumulate) or +0, each product and sum rounded.
void matmul(DataType TS, const uint8_t *S, DataType TX, const uint8_t *X,
            uint64_t K, uint64_t M, uint64_t N, bool Accumulate, float *Out);
/// Acc[e] = reduce(Acc[e], In[e]) in type T (docs/bir.md CollectiveCompute):
/// TensorTensor's Add, Max or Min with Acc as the first operand.
void reduceInto(ReduceOp Op, DataType T, const uint8_t *In, uint8_t *Acc,
                uint64_t N);

} // namespace loom::bir::sim

#endif
