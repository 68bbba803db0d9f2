// platform.h on bare metal: forwards every call to the application's hooks.
#include "platform/baremetal/hooks.h"

#include "platform/raw_storage.h"

namespace fedstat {
namespace platform {
namespace baremetal {
namespace {
Hooks g_hooks;
}  // namespace

void install_hooks(const Hooks& hooks) {
  g_hooks = hooks;
}
const Hooks& installed_hooks() {
  return g_hooks;
}

}  // namespace baremetal

using baremetal::g_hooks;

Status fill_entropy(MutableByteSpan out) {
  if (g_hooks.fill_entropy == nullptr) {
    return unavailable(
        "no entropy hook: install Hooks::fill_entropy (a hardware TRNG driver) "
        "with platform::baremetal::install_hooks before seeding a Csprng");
  }
  return g_hooks.fill_entropy(out);
}

uint64_t monotonic_micros() {
  return g_hooks.monotonic_micros == nullptr ? 0 : g_hooks.monotonic_micros();
}

namespace raw {
Status write_atomically(const char* name, const ByteSpan* parts, size_t part_count) {
  if (g_hooks.write_atomically == nullptr) {
    return unavailable("no storage hook: install Hooks::write_atomically/read_at/size_of/remove");
  }
  return g_hooks.write_atomically(name, parts, part_count);
}
Result<size_t> read_at(const char* name, size_t offset, MutableByteSpan out) {
  if (g_hooks.read_at == nullptr) return unavailable("no storage hook: install Hooks::read_at");
  return g_hooks.read_at(name, offset, out);
}
Result<size_t> size_of(const char* name) {
  if (g_hooks.size_of == nullptr) return unavailable("no storage hook: install Hooks::size_of");
  return g_hooks.size_of(name);
}
Status remove(const char* name) {
  if (g_hooks.remove == nullptr) return unavailable("no storage hook: install Hooks::remove");
  return g_hooks.remove(name);
}
}  // namespace raw

Result<Connection> transport_connect(const char* endpoint, uint32_t timeout_ms) {
  if (g_hooks.connect == nullptr) {
    return unavailable("no transport hook: install Hooks::connect/send/receive/close");
  }
  return g_hooks.connect(endpoint, timeout_ms);
}
Status transport_send(Connection connection, ByteSpan bytes) {
  if (g_hooks.send == nullptr) return unavailable("no transport hook: install Hooks::send");
  return g_hooks.send(connection, bytes);
}
Result<size_t> transport_receive(Connection connection, MutableByteSpan out, uint32_t timeout_ms) {
  if (g_hooks.receive == nullptr) return unavailable("no transport hook: install Hooks::receive");
  return g_hooks.receive(connection, out, timeout_ms);
}
void transport_close(Connection connection) {
  if (g_hooks.close != nullptr) g_hooks.close(connection);
}

}  // namespace platform
}  // namespace fedstat
