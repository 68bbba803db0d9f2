// The TAgg's serving mode (a config with role "tagg"): the TLS listener, where only the
// configured collectors' PSK identities complete a handshake, feeding TaggIntake → TaggService
// over the SQLite store, until SIGTERM/SIGINT. It plans every declared task as a collector would
// (the same declarations: points, Π, the KL options) and answers for the TAGG ones only.
// Its noise comes from the CSPRNG (the config's noise_seed is refused: server_config.h).
// Logs are JSON lines on `log`: a warning per secret file others can read (file_access.h: the
// config holding collectors' keys, tagg.db), listening, one line per answer (tagg_intake.h),
// stopping.
// Errors: std::invalid_argument / std::runtime_error from the config, plans and store, before
// serving starts. Memory: the plans and the store's. Paper: 000 §4 (the TAgg model).
#ifndef FEDSTAT_HOST_TAGG_TAGG_APP_H_
#define FEDSTAT_HOST_TAGG_TAGG_APP_H_

#include <cstdint>
#include <map>

#include <ostream>
#include <string>

#include "host_server/server_config.h"
#include "host_server/tagg/tagg_intake.h"
#include "host_server/tasks/task_plan.h"

namespace fedstat {
namespace host {

struct TaggPlans {
  std::map<uint32_t, TaskPlan> plans;
  std::map<uint32_t, std::string> definitions;  // what the TAgg's store keeps per TAGG task
  // Each TAGG task's collector: config.task_collectors' entry, else the only collector listed;
  // std::invalid_argument when several are listed and a TAGG task names none, or an entry names
  // a task that is not a declared TAGG task.
  TaskCollectors owners;
};
TaggPlans plan_tagg_tasks(const ServerConfig& config);

int serve_tagg(const ServerConfig& config, const std::string& port_file, std::ostream& log);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_TAGG_TAGG_APP_H_
