// The server's configuration file (server_config.h).
#include "host_server/server_config.h"

#include <arpa/inet.h>

#include <algorithm>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <stdexcept>

#include "host_server/credential/fleet_credentials.h"
#include "host_server/hex.h"
#include "host_server/store/store_factory.h"
#include "host_server/store/store_spec.h"

namespace fedstat {
namespace host {

using nlohmann::json;

std::array<uint8_t, 32> parse_hex32(const std::string& hex, const std::string& field) {
  const auto bytes = decode_hex32(hex);
  if (!bytes) throw std::invalid_argument(field + " must be 64 hex digits");
  return *bytes;
}

void parse_listen(const std::string& listen, ServerConfig& config) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size()) {
    throw std::invalid_argument("listen must be host:port (e.g. 127.0.0.1:7443), not '" + listen +
                                "'");
  }
  const std::string port = listen.substr(colon + 1);
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(port) > 65535) {
    throw std::invalid_argument("listen: the port must be 0..65535, not '" + port + "'");
  }
  config.address = listen.substr(0, colon);
  if (config.address.size() > 2 && config.address.front() == '[' && config.address.back() == ']') {
    config.address = config.address.substr(1, config.address.size() - 2);
  }
  config.port = static_cast<uint16_t>(std::stoul(port));
}

bool is_loopback_address(const std::string& address) {
  in_addr v4{};
  in6_addr v6{};
  return address == "localhost" ||
         (inet_pton(AF_INET, address.c_str(), &v4) == 1 && (ntohl(v4.s_addr) >> 24) == 127) ||
         (inet_pton(AF_INET6, address.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6));
}

void parse_status_listen(const std::string& listen, ServerConfig& config) {
  // The status page has no authentication: a loopback address only.
  ServerConfig where;
  try {
    parse_listen(listen, where);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("status_listen: ") + e.what());
  }
  if (!is_loopback_address(where.address)) {
    throw std::invalid_argument(
        "status_listen must be a loopback address (127.0.0.1, [::1] or localhost): the status "
        "page has no authentication, not '" +
        listen + "'");
  }
  if (config.tagg_role) {
    throw std::invalid_argument(config.config_path + ": status_listen is a collector's");
  }
  config.status_listen = listen;
}

namespace {

// A string field's text; std::invalid_argument naming the field when it is not a JSON string (a
// number or an object there would otherwise escape as nlohmann's type_error, naming nothing).
std::string text_field(const json& value, const std::string& field) {
  if (!value.is_string()) {
    throw std::invalid_argument(field + " must be a string, not " + value.dump());
  }
  return value.get<std::string>();
}

std::string resolve(const std::string& base_dir, const std::string& path) {
  if (path.empty() || path[0] == '/' || base_dir.empty()) return path;
  return base_dir + "/" + path;
}

}  // namespace

std::string resolve_store(const std::string& base_dir, const std::string& spec) {
  const StoreSpec parsed = parse_store_spec(spec);
  if (parsed.backend == StoreBackend::kSqlite) return resolve(base_dir, parsed.location);
  if (!postgresql_store_available()) {
    throw std::invalid_argument("store \"" + redacted_store_spec(spec) +
                                "\": this fedstat-server was built without PostgreSQL (libpq-dev)");
  }
  return parsed.location;
}

namespace {

uint64_t whole(const json& value, const std::string& field, uint64_t low, uint64_t high) {
  const bool ok =
      value.is_number_unsigned() || (value.is_number_integer() && value.get<int64_t>() >= 0);
  if (!ok || value.get<uint64_t>() < low || value.get<uint64_t>() > high) {
    throw std::invalid_argument(field + " must be a whole number in [" + std::to_string(low) +
                                ", " + std::to_string(high) + "], not " + value.dump());
  }
  return value.get<uint64_t>();
}

// std::invalid_argument "<where>: unknown field '<key>'" for a key of `object` not in `known`.
void refuse_unknown_fields(const json& object, std::initializer_list<const char*> known,
                           const std::string& where) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (std::find(known.begin(), known.end(), it.key()) == known.end()) {
      throw std::invalid_argument(where + ": unknown field '" + it.key() + "'");
    }
  }
}

// A PSK identity: printable ASCII, 1..64 characters (mbedTLS takes any bytes; logs print it).
std::string identity(const json& value, const std::string& field) {
  if (!value.is_string() || value.get<std::string>().empty() ||
      value.get<std::string>().size() > 64) {
    throw std::invalid_argument(field + " must be a PSK identity of 1..64 characters");
  }
  const std::string text = value.get<std::string>();
  for (char c : text) {
    if (c < 0x21 || c > 0x7e) throw std::invalid_argument(field + ": printable ASCII only");
  }
  return text;
}

TaggEndpoint parse_tagg(const json& t) {
  if (!t.is_object()) throw std::invalid_argument("tagg must be an object");
  refuse_unknown_fields(t, {"endpoint", "identity", "psk", "attempts", "timeout_ms"}, "tagg");
  for (const char* needed : {"endpoint", "identity", "psk"}) {
    if (!t.contains(needed))
      throw std::invalid_argument(std::string("tagg.") + needed + " is missing");
  }
  TaggEndpoint out;
  if (!t["endpoint"].is_string()) throw std::invalid_argument("tagg.endpoint must be host:port");
  ServerConfig check;  // the endpoint has the listen form
  parse_listen(t["endpoint"].get<std::string>(), check);
  if (check.port == 0) throw std::invalid_argument("tagg.endpoint needs a port");
  out.endpoint = t["endpoint"].get<std::string>();
  out.identity = identity(t["identity"], "tagg.identity");
  if (!t["psk"].is_string()) throw std::invalid_argument("tagg.psk must be 64 hex digits");
  out.psk = parse_hex32(t["psk"].get<std::string>(), "tagg.psk");
  if (t.contains("attempts")) {
    out.attempts = static_cast<uint32_t>(whole(t["attempts"], "tagg.attempts", 1, 1000));
  }
  if (t.contains("timeout_ms")) {
    out.timeout_ms = static_cast<uint32_t>(whole(t["timeout_ms"], "tagg.timeout_ms", 100, 600000));
  }
  return out;
}

}  // namespace

ServerConfig read_server_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read the config file " + path);
  json file;
  try {
    file = json::parse(in);
  } catch (const json::exception& e) {  // a syntax error, or a number out of range (406)
    throw std::invalid_argument(path + ": not JSON: " + e.what());
  }
  if (file.is_array()) {
    // examples/fleet/tasks.json is such a list: the demo scripts' tasks, not a server config.
    throw std::invalid_argument(
        path +
        " holds a JSON array (a list of task declarations, as examples/fleet/tasks.json, which "
        "scripts/demo.sh and scripts/fleet_demo.py read), not a server config. A server config "
        "is one JSON object: {\"listen\": \"127.0.0.1:7443\", \"store\": \"server.db\", "
        "\"fleet_secret\" or \"credentials\": ..., \"tasks\": [ ...these declarations... ]}; "
        "start from examples/server/server.json (every field: docs/server_config.md)");
  }
  if (!file.is_object()) {
    throw std::invalid_argument(path +
                                ": must hold one JSON object, a server config (see "
                                "examples/server/server.json and docs/server_config.md)");
  }
  ServerConfig config;
  const size_t slash = path.rfind('/');
  config.base_dir = slash == std::string::npos ? "." : path.substr(0, slash);
  config.config_path = path;
  if (file.contains("noise_seed")) {
    // It once seeded the central noise; nothing reads it now, and a field that silently does
    // nothing would let an operator believe a release is reproducible, or seeded by a value
    // someone else knows.
    throw std::invalid_argument(
        path +
        ": noise_seed is no longer read: remove it. A collector noises each round from a seed "
        "drawn from its CSPRNG and stored with the round (a restart publishes the same result); "
        "a TAgg noises its tagg tasks from its CSPRNG");
  }
  refuse_unknown_fields(file,
                        {"listen",
                         "store",
                         "store_outage_seconds",
                         "credentials",
                         "fleet_secret",
                         "handshake_timeout_ms",
                         "idle_timeout_ms",
                         "max_connections",
                         "tls_session_cache_entries",
                         "tls_session_lifetime_seconds",
                         "check_ins_per_minute",
                         "handshakes_per_address_per_minute",
                         "max_connections_per_identity",
                         "max_connections_per_address",
                         "exempt_loopback_peers",
                         "tasks",
                         "role",
                         "tagg",
                         "collectors",
                         "task_collectors",
                         "status_listen",
                         "ca_public_key",
                         "tls_certificate",
                         "tls_private_key",
                         "tls_client_ca",
                         "device_authentication",
                         "tls_revoked_devices"},
                        path);
  if (file.contains("listen")) parse_listen(text_field(file["listen"], "listen"), config);
  if (file.contains("store")) {
    config.store_path = resolve_store(config.base_dir, text_field(file["store"], "store"));
  }
  if (file.contains("credentials")) {
    config.credentials_path =
        resolve(config.base_dir, text_field(file["credentials"], "credentials"));
  }
  if (file.contains("fleet_secret")) {
    config.fleet_secret =
        parse_hex32(text_field(file["fleet_secret"], "fleet_secret"), "fleet_secret");
  }
  if (file.contains("ca_public_key")) {
    const std::string ca_path =
        resolve(config.base_dir, text_field(file["ca_public_key"], "ca_public_key"));
    try {
      // The server holds the CA's public key only: a private key file is refused, not split.
      std::ifstream probe(ca_path);
      std::string first;
      std::getline(probe, first);
      if (first == kCaKeyMagic) {
        throw std::invalid_argument(
            "ca_public_key: " + ca_path +
            " is the CA's private key file; give the server ca.pub (fedstat-ca init writes both) "
            "and keep ca.key offline");
      }
      config.ca_public_key = read_ca_public_key(ca_path);
    } catch (const FleetCredentialError& e) {
      throw std::invalid_argument(std::string("ca_public_key: ") + e.what());
    }
  }
  {
    const char* const names[3] = {"tls_certificate", "tls_private_key", "tls_client_ca"};
    std::string* const contents[3] = {&config.tls_certificate_pem, &config.tls_private_key_pem,
                                      &config.tls_client_ca_pem};
    int given = 0;
    for (int i = 0; i < 3; ++i) {
      if (!file.contains(names[i])) continue;
      ++given;
      const std::string where = resolve(config.base_dir, text_field(file[names[i]], names[i]));
      std::ifstream in(where, std::ios::binary);
      if (!in) {
        throw std::invalid_argument(std::string(names[i]) + ": cannot open " + where);
      }
      std::ostringstream text;
      text << in.rdbuf();
      *contents[i] = text.str();
      if (contents[i]->empty() || contents[i]->size() > (1u << 20)) {
        throw std::invalid_argument(std::string(names[i]) + ": " + where +
                                    " is empty or over 1 MiB (give a PEM file from fedstat-ca)");
      }
      if (i == 1) config.tls_private_key_path = where;
      if (i == 1 && contents[i]->find("fedstat-ca private key") != std::string::npos) {
        throw std::invalid_argument(
            "tls_private_key: " + where +
            " is the CA's private key; give the server key fedstat-ca server-cert wrote, and "
            "keep ca.key offline");
      }
    }
    if (given != 0 && given != 3) {
      throw std::invalid_argument(
          path + ": give all three of tls_certificate, tls_private_key and tls_client_ca, or none");
    }
    const bool certificates = given == 3;
    config.device_authentication = certificates ? "either" : "psk";
    if (file.contains("device_authentication")) {
      const std::string mode = text_field(file["device_authentication"], "device_authentication");
      if (mode != "psk" && mode != "certificate" && mode != "either") {
        throw std::invalid_argument(
            "device_authentication must be \"psk\", \"certificate\" or "
            "\"either\", not \"" +
            mode + "\"");
      }
      if (mode != "psk" && !certificates) {
        throw std::invalid_argument("device_authentication \"" + mode +
                                    "\" needs tls_certificate, tls_private_key and tls_client_ca "
                                    "(fedstat-ca server-cert and init write them)");
      }
      config.device_authentication = mode;
    }
    if (file.contains("tls_revoked_devices")) {
      if (!certificates) {
        throw std::invalid_argument(
            "tls_revoked_devices lists revoked device certificates: it needs tls_certificate, "
            "tls_private_key and tls_client_ca (a PSK device is revoked by removing it from "
            "credentials)");
      }
      config.tls_revoked_devices_path =
          resolve(config.base_dir, text_field(file["tls_revoked_devices"], "tls_revoked_devices"));
    }
  }
  if (file.contains("role")) {
    const json& role = file["role"];
    if (role != "collector" && role != "tagg") {
      throw std::invalid_argument(path + ": role must be \"collector\" or \"tagg\", not " +
                                  role.dump());
    }
    config.tagg_role = role == "tagg";
  }
  if (config.tagg_role && !config.tls_certificate_pem.empty()) {
    throw std::invalid_argument(path +
                                ": tls_certificate, tls_private_key and tls_client_ca are a "
                                "collector's (devices reach it)");
  }
  if (config.tagg_role && config.ca_public_key) {
    throw std::invalid_argument(path + ": ca_public_key is a collector's (devices reach it)");
  }
  if (config.tagg_role) {
    // The TAgg talks to collectors only: no device reaches it.
    if (!config.credentials_path.empty() || config.fleet_secret || file.contains("tagg")) {
      throw std::invalid_argument(path +
                                  ": a TAgg (role \"tagg\") takes collectors, not credentials, "
                                  "fleet_secret or tagg");
    }
    const json& collectors = file.contains("collectors") ? file["collectors"] : json();
    if (!collectors.is_object() || collectors.empty()) {
      throw std::invalid_argument(path + ": a TAgg needs collectors: {\"identity\": \"psk\", ...}");
    }
    for (auto it = collectors.begin(); it != collectors.end(); ++it) {
      const std::string name = identity(json(it.key()), "collectors identity");
      if (!it.value().is_string()) {
        throw std::invalid_argument("collectors." + name + " must be 64 hex digits");
      }
      config.collectors[name] = parse_hex32(it.value().get<std::string>(), "collectors." + name);
    }
    const json& owners =
        file.contains("task_collectors") ? file["task_collectors"] : json::object();
    if (!owners.is_object()) {
      throw std::invalid_argument(path + ": task_collectors must be {\"<task id>\": \"identity\"}");
    }
    for (auto it = owners.begin(); it != owners.end(); ++it) {
      const std::string& key = it.key();
      if (key.empty() || key.size() > 10 ||
          key.find_first_not_of("0123456789") != std::string::npos) {
        throw std::invalid_argument("task_collectors: '" + key + "' is not a task id");
      }
      const uint64_t task =
          whole(json(std::stoull(key)), "task_collectors." + key, 1, uint64_t{1} << 31);
      const std::string name = identity(it.value(), "task_collectors." + it.key());
      if (config.collectors.count(name) == 0) {
        throw std::invalid_argument("task_collectors." + it.key() + ": \"" + name +
                                    "\" is not one of collectors");
      }
      config.task_collectors[static_cast<uint32_t>(task)] = name;
    }
  } else {
    if (config.device_authentication == "certificate") {
      if (!config.credentials_path.empty() && config.fleet_secret) {
        throw std::invalid_argument(path + ": give at most one of credentials and fleet_secret");
      }
    } else if (config.credentials_path.empty() == !config.fleet_secret.has_value()) {
      throw std::invalid_argument(path +
                                  ": give exactly one of credentials and fleet_secret (or "
                                  "device_authentication \"certificate\" with certificates)");
    }
    if (file.contains("collectors") || file.contains("task_collectors")) {
      throw std::invalid_argument(path +
                                  ": collectors and task_collectors are a TAgg's fields (role "
                                  "\"tagg\")");
    }
    if (file.contains("tagg")) config.tagg = parse_tagg(file["tagg"]);
  }
  if (file.contains("handshake_timeout_ms")) {
    config.handshake_timeout_ms = static_cast<uint32_t>(
        whole(file["handshake_timeout_ms"], "handshake_timeout_ms", 10, 600000));
  }
  if (file.contains("idle_timeout_ms")) {
    config.idle_timeout_ms =
        static_cast<uint32_t>(whole(file["idle_timeout_ms"], "idle_timeout_ms", 10, 86400000));
  }
  if (file.contains("max_connections")) {
    config.max_connections = whole(file["max_connections"], "max_connections", 1, 1u << 20);
  }
  if (file.contains("tls_session_cache_entries")) {
    config.tls_session_cache_entries =
        whole(file["tls_session_cache_entries"], "tls_session_cache_entries", 0, 1u << 24);
  }
  if (file.contains("store_outage_seconds")) {
    config.store_outage_seconds = static_cast<uint32_t>(
        whole(file["store_outage_seconds"], "store_outage_seconds", 0, 86400));
  }
  if (file.contains("tls_session_lifetime_seconds")) {
    // RFC 5246 §F.1.4: a session is resumed for at most 24 hours.
    config.tls_session_lifetime_seconds = static_cast<uint32_t>(
        whole(file["tls_session_lifetime_seconds"], "tls_session_lifetime_seconds", 1, 86400));
  }
  if (file.contains("check_ins_per_minute")) {
    config.check_ins_per_minute = static_cast<uint32_t>(
        whole(file["check_ins_per_minute"], "check_ins_per_minute", 0, 1000000));
  }
  if (file.contains("handshakes_per_address_per_minute")) {
    config.handshakes_per_address_per_minute =
        static_cast<uint32_t>(whole(file["handshakes_per_address_per_minute"],
                                    "handshakes_per_address_per_minute", 0, 1000000));
  }
  if (file.contains("max_connections_per_identity")) {
    config.max_connections_per_identity =
        whole(file["max_connections_per_identity"], "max_connections_per_identity", 0, 1u << 20);
  }
  if (file.contains("max_connections_per_address")) {
    config.max_connections_per_address =
        whole(file["max_connections_per_address"], "max_connections_per_address", 0, 1u << 20);
  }
  if (file.contains("exempt_loopback_peers")) {
    if (!file["exempt_loopback_peers"].is_boolean()) {
      throw std::invalid_argument("exempt_loopback_peers must be true or false, not " +
                                  file["exempt_loopback_peers"].dump());
    }
    config.exempt_loopback_peers = file["exempt_loopback_peers"].get<bool>();
  }
  if (file.contains("status_listen")) {
    parse_status_listen(text_field(file["status_listen"], "status_listen"), config);
  }
  if (file.contains("tasks")) {
    if (!file["tasks"].is_array()) throw std::invalid_argument("tasks must be an array");
    config.tasks = file["tasks"];
  }
  return config;
}

}  // namespace host
}  // namespace fedstat
