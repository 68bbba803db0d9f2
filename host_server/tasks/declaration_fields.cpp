// Reading a task declaration's fields (declaration_fields.h).
#include "host_server/tasks/declaration_fields.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fedstat {
namespace host {
namespace declaration {

using nlohmann::json;

[[noreturn]] void refuse(const std::string& field, const std::string& why) {
  throw std::invalid_argument("task declaration: " + field + " " + why);
}

void only_fields(const json& object, std::initializer_list<const char*> fields,
                 const std::string& where) {
  if (!object.is_object()) refuse(where, "must be a JSON object");
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (std::find(fields.begin(), fields.end(), it.key()) != fields.end()) continue;
    std::string listed;
    for (const char* field : fields) listed += (listed.empty() ? "" : ", ") + std::string(field);
    throw std::invalid_argument("task declaration: " + where + ": unknown field '" + it.key() +
                                "' (the fields of " + where + ": " + listed + ")");
  }
}

const json& member(const json& object, const std::string& name, const std::string& where) {
  if (!object.is_object()) refuse(where, "must be a JSON object");
  const auto it = object.find(name);
  if (it == object.end()) refuse(where + "." + name, "is missing");
  return *it;
}

uint64_t whole_number(const json& object, const std::string& name, const std::string& where,
                      uint64_t low, uint64_t high) {
  const json& value = member(object, name, where);
  const bool whole =
      value.is_number_unsigned() || (value.is_number_integer() && value.get<int64_t>() >= 0);
  if (!whole) {
    refuse(where + "." + name, "must be a whole number >= 0 (got " + value.dump() + ")");
  }
  const uint64_t v = value.get<uint64_t>();
  if (v < low || v > high) {
    refuse(where + "." + name, "must lie in [" + std::to_string(low) + ", " + std::to_string(high) +
                                   "], not " + std::to_string(v));
  }
  return v;
}

uint64_t whole_number_or(const json& object, const std::string& name, const std::string& where,
                         uint64_t low, uint64_t high, uint64_t fallback) {
  if (!object.contains(name)) return fallback;
  return whole_number(object, name, where, low, high);
}

double real_number(const json& object, const std::string& name, const std::string& where,
                   double low, double high) {
  const json& value = member(object, name, where);
  if (!value.is_number()) refuse(where + "." + name, "must be a number (got " + value.dump() + ")");
  const double v = value.get<double>();
  if (!std::isfinite(v) || v < low || v > high) {
    refuse(where + "." + name, "must be finite and in [" + std::to_string(low) + ", " +
                                   std::to_string(high) + "], not " + value.dump());
  }
  return v;
}

std::string text(const json& object, const std::string& name, const std::string& where) {
  const json& value = member(object, name, where);
  if (!value.is_string()) refuse(where + "." + name, "must be a string");
  return value.get<std::string>();
}

bool flag(const json& object, const std::string& name, const std::string& where) {
  const json& value = member(object, name, where);
  if (!value.is_boolean()) {
    refuse(where + "." + name, "must be true or false (got " + value.dump() + ")");
  }
  return value.get<bool>();
}

std::string resolve(const std::string& base_dir, const std::string& path) {
  if (path.empty() || path[0] == '/' || base_dir.empty()) return path;
  return base_dir + "/" + path;
}

}  // namespace declaration
}  // namespace host
}  // namespace fedstat
