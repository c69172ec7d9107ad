//===- IdentityCustomCalls.h - Custom-calls that pass a value on -*- C++ -*-===//
//
// The custom-call targets that dumps carry as value-preserving markers. The
// interpreter runs them as identities and hlo-to-bir lowers them as such;
// this is the one list both read (docs/interpreter.md, "What is refused").
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_HLO_IR_IDENTITYCUSTOMCALLS_H
#define LOOM_HLO_IR_IDENTITYCUSTOMCALLS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace loom::hlo {

/// The markers XLA's SPMD partitioner, sharding propagation and host
/// offloading leave: `Sharding`, `ShardBarrierFrom`, `ShardBarrierTo`,
/// `SPMDFullToShardShape` and `SPMDShardToFullShape` (in a module before
/// partitioning both keep the full shape), `MoveToHost`, `MoveToDevice`,
/// `PinToDevice`, `PinToDeviceSram`, `annotate_device_placement`,
/// `xla.sdy.FuncResultSharding`; and the two torch-neuronx inserts around
/// a module's parameters and outputs, `AwsNeuronTransferWithStaticRing` (a
/// parameter read through the runtime's static ring; its autograd forward
/// and backward are the same transfer of the tensor, of its dtype and
/// sizes) and `TorchNeuronStartBackward` (a mark whose backward passes the
/// gradient on). Each takes one operand of its result's shape.
llvm::ArrayRef<llvm::StringRef> getIdentityCustomCallTargets();

bool IsIdentityCustomCallTarget(llvm::StringRef target);

} // namespace loom::hlo

#endif
