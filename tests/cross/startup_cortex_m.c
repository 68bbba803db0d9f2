/* Start-up code for the bare-metal test image (Cortex-M, newlib-nano + semihosting).
 * newlib ships no vector table or reset handler for Cortex-M, and rdimon's crt0 does not copy
 * .data from flash, so the image brings its own: copy .data, zero .bss, enable the FPU, open the
 * semihosting stdio handles, run constructors, call main, and exit with its return value (QEMU
 * hands the status to the shell, and so to CTest). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern uint32_t __etext, __data_start__, __data_end__, __bss_start__, __bss_end__, __StackTop;
extern int main(void);
extern void __libc_init_array(void);
extern void initialise_monitor_handles(void);

void Reset_Handler(void) {
  memcpy(&__data_start__, &__etext, (size_t)((char*)&__data_end__ - (char*)&__data_start__));
  memset(&__bss_start__, 0, (size_t)((char*)&__bss_end__ - (char*)&__bss_start__));
#if defined(__ARM_FP)
  /* CPACR: full access to coprocessors 10 and 11 (the FPU). */
  *(volatile uint32_t*)0xE000ED88u |= (0xFu << 20);
  __asm__ volatile("dsb\n isb" ::: "memory");
#endif
  initialise_monitor_handles();
  __libc_init_array();
  exit(main());
}

static void Fault_Handler(void) {
  abort();
}

/* Newlib's __libc_init_array calls _init/_fini, which -nostartfiles leaves undefined. */
void _init(void) {}
void _fini(void) {}
void* __dso_handle = 0;

/* Entries are addresses (the first is the initial stack pointer, not code). */
__attribute__((section(".isr_vector"), used)) static const uintptr_t vector_table[16] = {
    (uintptr_t)&__StackTop,
    (uintptr_t)Reset_Handler,
    (uintptr_t)Fault_Handler, /* NMI */
    (uintptr_t)Fault_Handler, /* HardFault */
    (uintptr_t)Fault_Handler, /* MemManage */
    (uintptr_t)Fault_Handler, /* BusFault */
    (uintptr_t)Fault_Handler, /* UsageFault */
    0,
    0,
    0,
    0,
    (uintptr_t)Fault_Handler, /* SVCall */
    (uintptr_t)Fault_Handler, /* DebugMon */
    0,
    (uintptr_t)Fault_Handler, /* PendSV */
    (uintptr_t)Fault_Handler, /* SysTick */
};
