#include "host_server/store/store_spec.h"

#include <cctype>
#include <stdexcept>

namespace fedstat {
namespace host {
namespace {

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

// The scheme of "scheme://…" (RFC 3986 letters), or "" when `spec` has none.
std::string uri_scheme(const std::string& spec) {
  const size_t colon = spec.find("://");
  if (colon == std::string::npos || colon == 0) return "";
  if (!std::isalpha(static_cast<unsigned char>(spec[0]))) return "";
  for (size_t i = 0; i < colon; ++i) {
    const char c = spec[i];
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') return "";
  }
  return spec.substr(0, colon);
}

// Replaces the value after each "password=" (query parameter or conninfo keyword) up to the
// next '&' or whitespace (a quoted conninfo value: up to its closing quote).
std::string redact_password_parameters(std::string text) {
  const std::string key = "password=";
  size_t from = 0;
  while ((from = text.find(key, from)) != std::string::npos) {
    const size_t begin = from + key.size();
    size_t end = begin;
    if (end < text.size() && text[end] == '\'') {
      end = text.find('\'', end + 1);
      end = end == std::string::npos ? text.size() : end + 1;
    } else {
      while (end < text.size() && text[end] != '&' &&
             !std::isspace(static_cast<unsigned char>(text[end]))) {
        ++end;
      }
    }
    text.replace(begin, end - begin, "***");
    from = begin + 3;
  }
  return text;
}

}  // namespace

StoreSpec parse_store_spec(const std::string& spec) {
  if (spec.empty())
    throw std::invalid_argument("store: empty (a path, sqlite:PATH or postgresql://…)");
  StoreSpec out;
  if (starts_with(spec, "sqlite:")) {
    out.location = spec.substr(7);
    if (out.location.empty())
      throw std::invalid_argument("store \"sqlite:\": no path after sqlite:");
    return out;
  }
  const std::string scheme = uri_scheme(spec);
  if (scheme.empty()) {
    out.location = spec;
    return out;
  }
  if (scheme != "postgresql" && scheme != "postgres") {
    throw std::invalid_argument("store \"" + redacted_store_spec(spec) + "\": unknown scheme " +
                                scheme + " (a path, sqlite:PATH, or postgresql://…)");
  }
  if (spec.size() == scheme.size() + 3) {
    throw std::invalid_argument("store \"" + spec +
                                "\": names no database (postgresql://[user@]host[:port]/dbname)");
  }
  out.backend = StoreBackend::kPostgresql;
  out.location = spec;
  return out;
}

std::string redacted_store_spec(const std::string& spec) {
  const std::string scheme = uri_scheme(spec);
  std::string out = spec;
  if (!scheme.empty()) {
    // userinfo: from "://" to the last '@' before the query ('?'), so that a password holding an
    // unescaped '/' is redacted too (over-redacting a path holding '@' is harmless).
    const size_t begin = scheme.size() + 3;
    const size_t query = out.find('?', begin);
    const size_t at = out.rfind('@', query == std::string::npos ? std::string::npos : query);
    if (at != std::string::npos && at >= begin) {
      const size_t colon = out.find(':', begin);
      if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
    }
  }
  return redact_password_parameters(out);
}

bool postgresql_store_available() {
#ifdef FEDSTAT_WITH_POSTGRESQL
  return true;
#else
  return false;
#endif
}

}  // namespace host
}  // namespace fedstat
