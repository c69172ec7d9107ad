// Unit tests of the Chrome trace writer: the output parses as JSON whatever
// the instruction names hold, every event is well formed for the Trace Event
// Format (name, ph, pid, tid; ts/dur in microseconds; flows as "s"/"f" pairs
// with one id and "bp": "e"), and processes and tracks are named per core
// and engine.
#include "../../lib/bir/sim/ChromeTrace.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <map>
#include <set>

using namespace loom::bir;
using namespace loom::bir::sim;

namespace {

const Engine DMA3 = static_cast<Engine>(static_cast<unsigned>(Engine::DMA0) + 3);

std::string render(llvm::ArrayRef<TraceSlice> Slices, llvm::ArrayRef<TraceFlow> Flows,
                   unsigned NumCores) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  writeChromeTrace(OS, Slices, Flows, NumCores);
  OS.flush();
  return S;
}

struct Parsed {
  llvm::json::Value Doc = nullptr;
  std::vector<const llvm::json::Object *> Events;
};

// Parses the trace and checks the fields every event must have.
Parsed parseAndCheck(const std::string &Text) {
  Parsed P;
  auto Doc = llvm::json::parse(Text);
  if (!Doc) {
    ADD_FAILURE() << "not JSON: " << llvm::toString(Doc.takeError()) << "\n" << Text;
    return P;
  }
  P.Doc = std::move(*Doc);
  const llvm::json::Object *Top = P.Doc.getAsObject();
  EXPECT_TRUE(Top);
  if (!Top)
    return P;
  EXPECT_EQ(Top->getString("displayTimeUnit"), llvm::StringRef("ns"));
  const llvm::json::Array *Events = Top->getArray("traceEvents");
  EXPECT_TRUE(Events);
  if (!Events)
    return P;
  for (const llvm::json::Value &V : *Events) {
    const llvm::json::Object *E = V.getAsObject();
    EXPECT_TRUE(E);
    if (!E)
      continue;
    P.Events.push_back(E);
    EXPECT_TRUE(E->getString("name"));
    auto Ph = E->getString("ph");
    EXPECT_TRUE(Ph && (*Ph == "M" || *Ph == "X" || *Ph == "s" || *Ph == "f")) << Text;
    EXPECT_TRUE(E->getInteger("pid"));
    EXPECT_TRUE(E->getInteger("tid"));
    if (Ph && *Ph == "M") {
      EXPECT_TRUE(E->getObject("args"));
    }
    if (Ph && (*Ph == "X" || *Ph == "s" || *Ph == "f")) {
      auto Ts = E->getNumber("ts");
      EXPECT_TRUE(Ts && *Ts >= 0);
    }
    if (Ph && *Ph == "X") {
      auto Dur = E->getNumber("dur");
      EXPECT_TRUE(Dur && *Dur >= 0);
    }
    if (Ph && (*Ph == "s" || *Ph == "f")) {
      EXPECT_TRUE(E->getInteger("id"));
      EXPECT_TRUE(E->getString("cat"));
    }
    if (Ph && *Ph == "f") {
      EXPECT_EQ(E->getString("bp"), llvm::StringRef("e"));
    }
  }
  return P;
}

TEST(ChromeTraceTest, SlicesAreCompleteEventsInMicroseconds) {
  std::vector<TraceSlice> Slices = {
      {0, DMA3, "load_a", 0, 1500},
      {1, Engine::PE, "mm", 2500.5, 125.25},
  };
  Parsed P = parseAndCheck(render(Slices, {}, 2));
  std::vector<const llvm::json::Object *> X;
  for (const auto *E : P.Events)
    if (E->getString("ph") == llvm::StringRef("X"))
      X.push_back(E);
  ASSERT_EQ(X.size(), 2u);
  EXPECT_EQ(X[0]->getString("name"), llvm::StringRef("load_a"));
  EXPECT_EQ(*X[0]->getInteger("pid"), 0);
  EXPECT_EQ(*X[0]->getInteger("tid"), static_cast<int64_t>(DMA3));
  EXPECT_DOUBLE_EQ(*X[0]->getNumber("ts"), 0.0);
  EXPECT_DOUBLE_EQ(*X[0]->getNumber("dur"), 1.5);
  EXPECT_EQ(*X[1]->getInteger("pid"), 1);
  EXPECT_DOUBLE_EQ(*X[1]->getNumber("ts"), 2.5005);
  EXPECT_DOUBLE_EQ(*X[1]->getNumber("dur"), 0.12525);
}

TEST(ChromeTraceTest, SliceDetailsAreArgs) {
  TraceSlice Copy{0, Engine::POOL, "swap_copy", 0, 10};
  Copy.Details.Opcode = "GPSIMDSB2SB";
  Copy.Details.BytesRead = 64;
  Copy.Details.BytesWritten = 32;
  Copy.Details.Reads = {"a", "b"};
  Copy.Details.Writes = {"peer (core 1)"};
  Copy.Details.Collective = "swap";
  TraceSlice Plain{0, Engine::SP, "ret", 10, 1};
  Plain.Details.Opcode = "Branch";
  std::vector<TraceSlice> Slices = {Copy, Plain, {0, Engine::ACT, "bare", 11, 1}};
  Parsed P = parseAndCheck(render(Slices, {}, 1));
  std::map<std::string, const llvm::json::Object *> Args;
  for (const auto *E : P.Events)
    if (E->getString("ph") == llvm::StringRef("X"))
      Args[E->getString("name")->str()] = E->getObject("args");
  ASSERT_TRUE(Args.at("swap_copy"));
  const llvm::json::Object &A = *Args.at("swap_copy");
  EXPECT_EQ(A.getString("opcode"), llvm::StringRef("GPSIMDSB2SB"));
  EXPECT_EQ(A.getInteger("bytes_read").getValueOr(-1), 64);
  EXPECT_EQ(A.getInteger("bytes_written").getValueOr(-1), 32);
  ASSERT_TRUE(A.getArray("reads"));
  EXPECT_EQ(A.getArray("reads")->size(), 2u);
  EXPECT_EQ((*A.getArray("writes"))[0].getAsString(), llvm::StringRef("peer (core 1)"));
  EXPECT_EQ(A.getString("collective"), llvm::StringRef("swap"));
  // No collective: no key; no details at all: no args.
  ASSERT_TRUE(Args.at("ret"));
  EXPECT_FALSE(Args.at("ret")->get("collective"));
  EXPECT_EQ(Args.at("bare"), nullptr);
}

TEST(ChromeTraceTest, ProcessesPerCoreAndTracksPerEngine) {
  std::vector<TraceSlice> Slices = {{0, DMA3, "a", 0, 1}, {0, Engine::POOL, "b", 0, 1}};
  std::vector<TraceFlow> Flows = {{0, Engine::POOL, 0.5, 2, Engine::SP, 0.7, "cb"}};
  Parsed P = parseAndCheck(render(Slices, Flows, 2));
  std::map<int64_t, std::string> Processes;
  std::set<std::pair<int64_t, std::string>> Threads;
  for (const auto *E : P.Events) {
    if (E->getString("ph") != llvm::StringRef("M"))
      continue;
    auto Name = E->getObject("args")->getString("name");
    if (E->getString("name") == llvm::StringRef("process_name"))
      Processes[*E->getInteger("pid")] = Name->str();
    if (E->getString("name") == llvm::StringRef("thread_name"))
      Threads.insert({*E->getInteger("pid"), Name->str()});
  }
  // Cores 0 and 1 (NumCores) and core 2, which a flow names.
  EXPECT_EQ(Processes, (std::map<int64_t, std::string>{{0, "core 0"}, {1, "core 1"}, {2, "core 2"}}));
  EXPECT_EQ(Threads, (std::set<std::pair<int64_t, std::string>>{
                         {0, "DMA3"}, {0, "POOL"}, {2, "SP"}}));
}

TEST(ChromeTraceTest, FlowsArePairsWithOneId) {
  std::vector<TraceSlice> Slices = {{0, Engine::POOL, "cb", 0, 1000},
                                    {1, Engine::POOL, "cb", 200, 800}};
  std::vector<TraceFlow> Flows = {{0, Engine::POOL, 100, 1, Engine::POOL, 999, "cb"},
                                  {1, Engine::POOL, 300, 0, Engine::POOL, 999, "cb"}};
  Parsed P = parseAndCheck(render(Slices, Flows, 2));
  std::map<int64_t, std::vector<const llvm::json::Object *>> ById;
  for (const auto *E : P.Events) {
    auto Ph = E->getString("ph");
    if (Ph == llvm::StringRef("s") || Ph == llvm::StringRef("f"))
      ById[*E->getInteger("id")].push_back(E);
  }
  ASSERT_EQ(ById.size(), 2u);
  for (auto &[Id, Pair] : ById) {
    ASSERT_EQ(Pair.size(), 2u) << Id;
    EXPECT_EQ(Pair[0]->getString("ph"), llvm::StringRef("s"));
    EXPECT_EQ(Pair[1]->getString("ph"), llvm::StringRef("f"));
    EXPECT_EQ(Pair[0]->getString("cat"), Pair[1]->getString("cat"));
    EXPECT_EQ(Pair[0]->getString("name"), Pair[1]->getString("name"));
    EXPECT_LE(*Pair[0]->getNumber("ts"), *Pair[1]->getNumber("ts"));
  }
  EXPECT_EQ(*ById.begin()->second[0]->getInteger("pid"), 0);
  EXPECT_EQ(*ById.begin()->second[1]->getInteger("pid"), 1);
  EXPECT_DOUBLE_EQ(*ById.begin()->second[1]->getNumber("ts"), 0.999);
}

TEST(ChromeTraceTest, AnyNameGivesValidJson) {
  std::string Nasty = "q\"uote\\back\nnew\ttab\x01\x1f end";
  std::vector<TraceSlice> Slices = {{0, Engine::ACT, Nasty, 0, 1},
                                    {0, Engine::ACT, "bad \xff\xfe utf8", 1, 1},
                                    {0, Engine::ACT, "", 2, 1}};
  std::vector<TraceFlow> Flows = {{0, Engine::ACT, 0, 0, Engine::ACT, 2, Nasty}};
  Parsed P = parseAndCheck(render(Slices, Flows, 1));
  bool Found = false;
  for (const auto *E : P.Events)
    if (E->getString("ph") == llvm::StringRef("X") &&
        E->getString("name") == llvm::StringRef(Nasty))
      Found = true;
  EXPECT_TRUE(Found) << "the name must survive escaping unchanged";
}

TEST(ChromeTraceTest, NonFiniteOrNegativeTimesStayValid) {
  std::vector<TraceSlice> Slices = {{0, Engine::SP, "a", -5, std::nan("")},
                                    {0, Engine::SP, "b", 1e300 * 1e300, 1}};
  Parsed P = parseAndCheck(render(Slices, {}, 1));
  EXPECT_EQ(P.Events.size(), 2u + 2u + 2u); // process x2, thread x2, slices
}

TEST(ChromeTraceTest, EmptyTraceNamesTheCores) {
  Parsed P = parseAndCheck(render({}, {}, 3));
  unsigned ProcessNames = 0;
  for (const auto *E : P.Events)
    if (E->getString("name") == llvm::StringRef("process_name"))
      ++ProcessNames;
  EXPECT_EQ(ProcessNames, 3u);
}

} // namespace
