/// @file
/// The firmware's transport: platform transport hooks (platform/baremetal/hooks.h) over the
/// MPS2-AN386 board's UART0, an Arm CMSDK APB UART at 0x40004000, polled.
///
/// The UART carries the device's TLS byte stream to the server. Under QEMU the UART is a TCP
/// client socket (`-chardev socket,host=...,port=...,reconnect=1 -serial chardev:...`), so the
/// server sees an ordinary TCP connection; on a board it would be a serial link to a modem or
/// gateway that relays bytes. The device cannot close that TCP connection itself: the server
/// closes it when a session ends and QEMU connects again a second later. connect() therefore
/// waits kReconnectMillis and discards whatever the previous connection left in the UART (a
/// late alert), so a session always starts on a fresh connection.
///
/// @memory none (the registers only).
/// @paper none (infrastructure).
#ifndef FEDSTAT_EXAMPLES_CORTEX_M_FIRMWARE_CMSDK_UART_TRANSPORT_H_
#define FEDSTAT_EXAMPLES_CORTEX_M_FIRMWARE_CMSDK_UART_TRANSPORT_H_

#include <stdint.h>

#include "platform/baremetal/hooks.h"

namespace firmware {

/// How long connect() waits for the link to come back between sessions (QEMU's reconnect=1 is
/// one second).
constexpr uint32_t kReconnectMillis = 1500;

/// Enables UART0's transmitter and receiver and fills the four transport hooks of `hooks`
/// (connect accepts only the endpoint "uart0").
void install_uart_transport(fedstat::platform::baremetal::Hooks& hooks);

}  // namespace firmware

#endif  // FEDSTAT_EXAMPLES_CORTEX_M_FIRMWARE_CMSDK_UART_TRANSPORT_H_
