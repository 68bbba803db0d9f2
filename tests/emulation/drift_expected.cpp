// fedstat-drift-expected: for drift_monitor_test.sh, what fedstat-server must publish for a
// data-shift task (trust none, no local DP) whose contributors together counted the given event
// files: the SDK's contribution (client::build_contribution, as each drift monitor's Client builds
// it) of the union of the files' events, and the task plan's estimator on it — its JSON carries
// "sum_sha256" and "estimate". The union's contribution equals the sum of the devices' ones
// because the data-shift contribution is linear (ShiftSketch counters and the total, mod 2^64)
// and, without local DP, draws no noise.
//   fedstat-drift-expected TASK.json CONTRIBUTORS EVENTS_FILE...
// Event files as the monitor reads them (blank lines skipped; anything else must be an id).
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "host_server/estimate/host_common.h"
#include "host_server/tasks/task_plan.h"
#include "nlohmann/json.hpp"
#include "sdk/base/random_bits.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/client/contribution.h"

using namespace fedstat;

namespace {

class UnionData final : public client::ClientData {
 public:
  explicit UnionData(histogram::SparseHistogram& h) : h_(h) {}
  const histogram::SparseHistogram* histogram() override { return &h_; }

 private:
  histogram::SparseHistogram& h_;
};

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 4) {
    std::cerr << "usage: fedstat-drift-expected TASK.json CONTRIBUTORS EVENTS_FILE...\n";
    return 2;
  }
  const std::string task_path = argv[1];
  const std::string base_dir =
      task_path.find('/') == std::string::npos ? "." : task_path.substr(0, task_path.rfind('/'));
  const host::TaskPlan plan =
      host::plan_task(nlohmann::json::parse(std::ifstream(task_path)), base_dir, 0);
  if (plan.task.kind != fedstat_v1_TaskKind_DATA_SHIFT ||
      plan.task.trust != fedstat_v1_TrustModel_NONE ||
      plan.task.parameters.data_shift.local_epsilon != 0) {
    throw std::invalid_argument("the task must be data_shift, trust none, local_epsilon 0");
  }
  std::vector<histogram::SparseEntry> table(1u << 20);
  histogram::SparseHistogram events;
  host::check(events.init(Span<histogram::SparseEntry>(table.data(), table.size())), "histogram");
  for (int i = 3; i < argc; ++i) {
    std::ifstream in(argv[i]);
    if (!in) throw std::runtime_error(std::string("cannot read ") + argv[i]);
    std::string line;
    while (std::getline(in, line)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      host::check(events.add(static_cast<uint32_t>(std::stoul(line))), "adding an event");
    }
  }
  const size_t scratch_size = host::value_or_throw(
      client::scratch_bytes(plan.task, events.capacity()), "the contribution's scratch");
  std::vector<uint64_t> scratch(scratch_size / 8 + 1);
  std::vector<uint64_t> sum(plan.task.vector_length);
  SeededStream stream(host::seed_from_u64(1));  // drawn from only with local DP (refused above)
  RandomBits bits(stream);
  UnionData data(events);
  host::check(client::build_contribution(
                  plan.task, data, Span<const uint64_t>(plan.data.data(), plan.data.size()), bits,
                  MutableByteSpan(reinterpret_cast<uint8_t*>(scratch.data()), scratch_size),
                  Span<uint64_t>(sum.data(), sum.size())),
              "the union's contribution");
  nlohmann::json out = plan.estimate(sum, static_cast<uint32_t>(std::stoul(argv[2])));
  out["union_events"] = events.total();
  out["union_items"] = events.size();
  std::cout << out.dump() << "\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "fedstat-drift-expected: " << e.what() << "\n";
  return 1;
}
