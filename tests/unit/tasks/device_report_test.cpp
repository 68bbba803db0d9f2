// Whole device reports (tests/common/device_reports.h) give the bytes pinned in
// golden_vectors.h: on x86-64 here, on AArch64 when this test runs under qemu-aarch64, and on the
// Cortex-M4 in its self-test.
#include <gtest/gtest.h>

#include "tests/common/device_reports.h"
#include "tests/common/golden_vectors.h"

namespace fedstat {
namespace {

using golden_reports::Kind;

void expect_report(Kind kind, uint32_t expected, const char* what) {
  const Result<uint32_t> crc = golden_reports::report_crc(kind);
  ASSERT_TRUE(crc.ok()) << what << ": " << crc.status().message();
  EXPECT_EQ(crc.value(), expected) << what << std::hex << ": crc32 0x" << crc.value();
}

TEST(DeviceReport, DataShiftSketchIsTheSameBytesOnEveryArchitecture) {
  expect_report(Kind::kDataShift, golden::kDeviceReportCrcDataShift, "data_shift");
}

TEST(DeviceReport, DataShiftDistWithPolyaSharesIsTheSameBytesOnEveryArchitecture) {
  expect_report(Kind::kDataShiftDist, golden::kDeviceReportCrcDataShiftDist, "data_shift dist");
}

TEST(DeviceReport, KlAnswersWithSkellamSharesAreTheSameBytesOnEveryArchitecture) {
  expect_report(Kind::kKlAnswers, golden::kDeviceReportCrcKlAnswers, "kl");
}

TEST(DeviceReport, ModelUpdateWithRotationAndSharesIsTheSameBytesOnEveryArchitecture) {
  expect_report(Kind::kModelUpdate, golden::kDeviceReportCrcModelUpdate, "model_update");
}

}  // namespace
}  // namespace fedstat
