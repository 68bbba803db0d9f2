// Why a fleet of emulated devices (fedstat-sim) fell short of what it was asked: the devices that
// did not complete a task although nothing asked them not to, grouped by what happened to them,
// one line per reason ("task 3: 40 of 40 devices failed: could not connect to 127.0.0.1:7443:
// transport: connection refused or unreachable"). fedstat-sim prints the lines on stderr and exits
// 1 when there is one (docs/cli.md).
//
// What is asked of device i in a task: to complete it, unless it was told to drop out of it
// (--dropout), then to drop out ("dropped"). Anything else is a shortfall, whatever its cause: an
// error (no server, a wrong key, a storage failure), no task offered, the round aborted, the
// device declining the task (its privacy budget, its memory, its data, its policy), or an
// "unconfirmed" report (the round ended while the device was away). A device told to drop out
// that ended otherwise than by dropping is a shortfall too: --dropout explains only the devices
// that dropped out where they were told to. Devices run elsewhere (outcome "external") are not
// counted. Host only. Memory: the lines. Paper: none (emulation).
#ifndef FEDSTAT_HOST_SIM_FLEET_SHORTFALL_H_
#define FEDSTAT_HOST_SIM_FLEET_SHORTFALL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "host_server/sim/emulated_device.h"

namespace fedstat {
namespace host {

// The most reason lines fleet_shortfall returns; past it, one last line counts the rest.
inline constexpr size_t kMaxShortfallLines = 12;

// `reports[i]`: device i's report (run_emulated_device); `task_ids`: the tasks the fleet was to
// take part in, in order (a chained task's stages); `told_to_drop[i][k]`: device i was told to
// drop out of the k-th. Returns one line per reason, most devices first, each "task <id>: <n> of
// <asked> devices <what happened>[: <detail>]"; empty when every device did what it was asked.
// Throws std::invalid_argument when told_to_drop does not match reports and task_ids.
std::vector<std::string> fleet_shortfall(const std::vector<DeviceReport>& reports,
                                         const std::vector<uint32_t>& task_ids,
                                         const std::vector<std::vector<bool>>& told_to_drop);

// What happened to a device that ended a task with `outcome` ("error" → "failed", "no-task" →
// "were offered no task", ...), for a line about several devices.
std::string shortfall_phrase(const std::string& outcome);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_SIM_FLEET_SHORTFALL_H_
