// Platform transport hooks over the CMSDK APB UART0 of the MPS2-AN386 (cmsdk_uart_transport.h).
#include "examples/cortex_m_firmware/cmsdk_uart_transport.h"

#include <string.h>

#include "examples/cortex_m_firmware/stack_paint.h"
#include "platform/platform.h"

namespace firmware {
namespace {

using fedstat::ByteSpan;
using fedstat::MutableByteSpan;
using fedstat::Result;
using fedstat::Status;
using fedstat::platform::Connection;

// The Arm CMSDK APB UART's registers (Cortex-M System Design Kit TRM, "APB UART").
struct CmsdkUart {
  volatile uint32_t data;        // write: transmit a byte; read: the received byte
  volatile uint32_t state;       // bit 0: TX buffer full, bit 1: RX buffer full
  volatile uint32_t control;     // bit 0: TX enable, bit 1: RX enable
  volatile uint32_t interrupts;  // interrupt status / clear
  volatile uint32_t baud_divider;
};
constexpr uint32_t kTxFull = 1u << 0;
constexpr uint32_t kRxFull = 1u << 1;
constexpr uint32_t kTxEnable = 1u << 0;
constexpr uint32_t kRxEnable = 1u << 1;
constexpr int32_t kUartHandle = 0;
// How many status polls between clock reads (the semihosting clock is a trap to the host).
constexpr uint32_t kPollsPerClockRead = 256;

CmsdkUart& uart0() {
  return *reinterpret_cast<CmsdkUart*>(0x40004000u);
}

// Reads what is waiting, up to out.size() bytes; 0 if nothing is.
size_t drain_into(MutableByteSpan out) {
  size_t n = 0;
  while (n < out.size() && (uart0().state & kRxFull) != 0) {
    out[n++] = static_cast<uint8_t>(uart0().data);
  }
  return n;
}

Result<Connection> connect(const char* endpoint, uint32_t /*timeout_ms*/) {
  if (endpoint == nullptr || strcmp(endpoint, "uart0") != 0) {
    return fedstat::invalid_argument("UART transport: the only endpoint is \"uart0\"");
  }
  // The previous session's connection is closed by the server; wait for the new one and drop
  // whatever the old one left behind.
  const uint32_t started = board_ticks();
  const uint64_t until = fedstat::platform::monotonic_micros() + uint64_t{kReconnectMillis} * 1000;
  uint8_t discard[16];
  uint32_t polls = 0;
  for (;;) {
    drain_into(MutableByteSpan(discard, sizeof(discard)));
    if (++polls % kPollsPerClockRead == 0 && fedstat::platform::monotonic_micros() >= until) break;
  }
  add_waiting_since(started);
  Connection c;
  c.handle = kUartHandle;
  return c;
}

Status send(Connection connection, ByteSpan bytes) {
  if (connection.handle != kUartHandle) {
    return fedstat::unavailable("UART transport: not a UART connection");
  }
  const uint32_t started = board_ticks();
  for (size_t i = 0; i < bytes.size(); ++i) {
    while ((uart0().state & kTxFull) != 0) {
    }
    uart0().data = bytes[i];
  }
  add_waiting_since(started);
  return Status();
}

Result<size_t> receive(Connection connection, MutableByteSpan out, uint32_t timeout_ms) {
  if (connection.handle != kUartHandle) {
    return fedstat::unavailable("UART transport: not a UART connection");
  }
  const uint32_t started = board_ticks();
  const uint64_t deadline = fedstat::platform::monotonic_micros() + uint64_t{timeout_ms} * 1000;
  uint32_t polls = 0;
  for (;;) {
    const size_t n = drain_into(out);
    if (n > 0) {
      add_waiting_since(started);
      return n;
    }
    if (++polls % kPollsPerClockRead == 0 && fedstat::platform::monotonic_micros() >= deadline) {
      add_waiting_since(started);
      return fedstat::deadline_exceeded("UART transport: nothing received in time");
    }
  }
}

void close(Connection /*connection*/) {
  // Nothing to do: the TLS close_notify has been sent; the server closes the TCP connection.
}

}  // namespace

void install_uart_transport(fedstat::platform::baremetal::Hooks& hooks) {
  uart0().baud_divider = 16;  // the smallest divider the CMSDK UART accepts
  uart0().control = kTxEnable | kRxEnable;
  hooks.connect = connect;
  hooks.send = send;
  hooks.receive = receive;
  hooks.close = close;
}

}  // namespace firmware
