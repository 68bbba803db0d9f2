// Why a fleet fell short of what it was asked (fleet_shortfall.h).
#include "host_server/sim/fleet_shortfall.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

namespace fedstat {
namespace host {

std::string shortfall_phrase(const std::string& outcome) {
  static const std::map<std::string, std::string> kPhrases = {
      {"error", "failed"},
      {"no-task", "were offered no task"},
      {"aborted", "saw the round abort"},
      {"unconfirmed",
       "lost their connection after reporting and found the round over when they came back "
       "(their report may or may not be in the result)"},
      {"dropped", "dropped out without being told to"},
      {"declined-budget", "declined the task: their privacy ledger refused its (epsilon, delta)"},
      {"declined-memory", "declined the task: it needs more memory than --memory gives"},
      {"declined-no-data", "declined the task: they hold no data for its kind"},
      {"declined-interrupted", "declined the task: a reboot interrupted its round (not rejoined)"},
      {"version-too-old", "were refused: the server wants a newer SDK"},
      {"another-task", "took part in another task instead"}};
  const auto it = kPhrases.find(outcome);
  if (it != kPhrases.end()) return it->second;
  if (outcome.rfind("declined", 0) == 0) return "declined the task (" + outcome + ")";
  return "ended \"" + outcome + "\"";
}

std::vector<std::string> fleet_shortfall(const std::vector<DeviceReport>& reports,
                                         const std::vector<uint32_t>& task_ids,
                                         const std::vector<std::vector<bool>>& told_to_drop) {
  if (told_to_drop.size() != reports.size()) {
    throw std::invalid_argument("fleet_shortfall: one told_to_drop row per device");
  }
  struct Reason {
    uint32_t task = 0;
    uint32_t asked = 0;
    std::string outcome, detail;
    uint32_t devices = 0;
  };
  std::vector<Reason> reasons;  // in order of first appearance
  for (size_t k = 0; k < task_ids.size(); ++k) {
    const uint32_t id = task_ids[k];
    uint32_t asked = 0;
    const size_t first_reason = reasons.size();
    for (size_t i = 0; i < reports.size(); ++i) {
      const DeviceReport& r = reports[i];
      if (r.outcome == "external") continue;  // run elsewhere: its outcome is not known here
      if (told_to_drop[i].size() != task_ids.size()) {
        throw std::invalid_argument("fleet_shortfall: one told_to_drop entry per task");
      }
      ++asked;
      // The device's report for this task; if it was never offered it, its k-th task's (or its
      // last word: an error, no task).
      std::string outcome = r.outcome, detail = r.detail;
      uint32_t offered = r.task_id;
      size_t index = k;
      const auto t = std::find_if(r.tasks.begin(), r.tasks.end(),
                                  [&](const DeviceTaskReport& task) { return task.task_id == id; });
      if (t != r.tasks.end()) {
        outcome = t->outcome;
        detail = t->detail;
        offered = id;
        index = std::min<size_t>(t->index, task_ids.size() - 1);
      } else if (r.tasks.size() > k) {
        outcome = r.tasks[k].outcome;
        detail = r.tasks[k].detail;
        offered = r.tasks[k].task_id;
      }
      const bool drop = told_to_drop[i][index];
      if (offered == id && (outcome == "completed" || (drop && outcome == "dropped"))) continue;
      if (offered != 0 && offered != id) {  // the server gave it another task
        detail = "task " + std::to_string(offered) + ", " + outcome;
        outcome = "another-task";
      }
      auto same = std::find_if(reasons.begin() + static_cast<std::ptrdiff_t>(first_reason),
                               reasons.end(), [&](const Reason& reason) {
                                 return reason.outcome == outcome && reason.detail == detail;
                               });
      if (same == reasons.end()) {
        reasons.push_back(Reason{id, 0, outcome, detail, 0});
        same = reasons.end() - 1;
      }
      ++same->devices;
    }
    for (size_t j = first_reason; j < reasons.size(); ++j) reasons[j].asked = asked;
  }
  // Most devices first (within the task order), ties in order of appearance.
  std::stable_sort(reasons.begin(), reasons.end(), [&](const Reason& a, const Reason& b) {
    const auto rank = [&](uint32_t task) {
      return std::find(task_ids.begin(), task_ids.end(), task) - task_ids.begin();
    };
    if (rank(a.task) != rank(b.task)) return rank(a.task) < rank(b.task);
    return a.devices > b.devices;
  });
  std::vector<std::string> lines;
  uint32_t more_devices = 0;
  for (size_t j = 0; j < reasons.size(); ++j) {
    const Reason& reason = reasons[j];
    if (j + 1 >= kMaxShortfallLines && reasons.size() > kMaxShortfallLines) {
      more_devices += reason.devices;
      continue;
    }
    std::string line = "task " + std::to_string(reason.task) + ": " +
                       std::to_string(reason.devices) + " of " + std::to_string(reason.asked) +
                       " devices " + shortfall_phrase(reason.outcome);
    if (!reason.detail.empty()) line += ": " + reason.detail;
    lines.push_back(line);
  }
  if (more_devices > 0) {
    lines.push_back("... and " + std::to_string(reasons.size() - lines.size()) +
                    " more reasons for " + std::to_string(more_devices) +
                    " devices (each device's outcome and detail: \"devices\" in --json)");
  }
  return lines;
}

}  // namespace host
}  // namespace fedstat
