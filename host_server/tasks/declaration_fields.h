// Reading a task declaration's fields (task_plan.h): each helper checks one JSON member and
// refuses with std::invalid_argument("task declaration: <where>.<name> <why>"), so every error
// names the field. Shared by the task plans of every kind (task_plan.cpp, model_update_plan.cpp).
// Memory: none beyond the returned values. Paper: none.
#ifndef FEDSTAT_HOST_TASKS_DECLARATION_FIELDS_H_
#define FEDSTAT_HOST_TASKS_DECLARATION_FIELDS_H_

#include <cstdint>
#include <initializer_list>
#include <string>

#include "nlohmann/json.hpp"

namespace fedstat {
namespace host {
namespace declaration {

[[noreturn]] void refuse(const std::string& field, const std::string& why);

// Refuses the first member of `object` (a JSON object) whose name is not in `fields`:
// "task declaration: <where>: unknown field '<name>' (the fields of <where>: ...)". A misspelt
// optional field would otherwise leave its default in force unseen.
void only_fields(const nlohmann::json& object, std::initializer_list<const char*> fields,
                 const std::string& where);

// object[name]; refused when `object` is not an object or has no such member.
const nlohmann::json& member(const nlohmann::json& object, const std::string& name,
                             const std::string& where);

// A whole number in [low, high].
uint64_t whole_number(const nlohmann::json& object, const std::string& name,
                      const std::string& where, uint64_t low, uint64_t high);
// The same, or `fallback` when the member is absent.
uint64_t whole_number_or(const nlohmann::json& object, const std::string& name,
                         const std::string& where, uint64_t low, uint64_t high, uint64_t fallback);

// A finite number in [low, high] (NaN and ±inf refused).
double real_number(const nlohmann::json& object, const std::string& name, const std::string& where,
                   double low, double high);

std::string text(const nlohmann::json& object, const std::string& name, const std::string& where);

// true or false (JSON booleans only: 0/1 and "true" are refused).
bool flag(const nlohmann::json& object, const std::string& name, const std::string& where);

// `path` relative to `base_dir` (absolute paths and an empty base_dir unchanged).
std::string resolve(const std::string& base_dir, const std::string& path);

}  // namespace declaration
}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_TASKS_DECLARATION_FIELDS_H_
