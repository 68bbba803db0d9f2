# Cortex-M4F bare metal (hard float, newlib-nano) with Debian's gcc-arm-none-eabi.
# Test images run on QEMU's MPS2-AN386 board model (Cortex-M4, 4 MB flash, 256 KB RAM visible to
# our linker script) with semihosting for output, files, entropy and the exit status.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR cortex-m4)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(FEDSTAT_PLATFORM baremetal CACHE STRING "" FORCE)

set(_fedstat_cpu_flags "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16")
set(CMAKE_C_FLAGS_INIT "${_fedstat_cpu_flags} -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT "${_fedstat_cpu_flags} -ffunction-sections -fdata-sections -fno-exceptions -fno-rtti")
set(CMAKE_ASM_FLAGS_INIT "${_fedstat_cpu_flags}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "${_fedstat_cpu_flags} --specs=nano.specs -Wl,--gc-sections")
# Size is what a microcontroller pays for: -Os unless the build asks otherwise.
set(CMAKE_C_FLAGS_RELEASE_INIT "-Os")
set(CMAKE_CXX_FLAGS_RELEASE_INIT "-Os")
set(CMAKE_C_FLAGS_MINSIZEREL_INIT "-Os")
set(CMAKE_CXX_FLAGS_MINSIZEREL_INIT "-Os")

set(CMAKE_CROSSCOMPILING_EMULATOR
    qemu-system-arm;-M;mps2-an386;-nographic;-monitor;none;-semihosting-config;enable=on,target=native;-kernel)

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
