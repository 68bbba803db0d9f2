// Fuzz target: BudgetLedger::load() (sdk/privacy/budget_ledger.h) of a stored ledger whose bytes
// come from the fuzzer — the platform blob framing (blob_format.h: magic, length, CRC-32) and the
// ledger's own format behind it (version, count, 168-byte spends) — then, when it loads, a charge,
// the save that follows it and a load of the saved ledger by a second ledger object.
//
// Input: byte 0 is the mode, the rest the stored bytes (one fixed file in a temporary storage
// directory, rewritten per input). Mode bit 0 set (odd): "CRC repair" — the rest is the ledger's
// payload and the harness frames it as save_blob() does (magic, length, CRC-32), so the fuzzer
// reaches the ledger's parser behind the CRC; clear (even): the rest is the whole stored file,
// framing included. Bit 1: the charge carries an RDP curve. Bits 2..7: the clock of the charge,
// kT0 + k · 6 days (k = 0..63: past the 30-day window, so stored spends expire).
//
// Invariants beyond "no crash or sanitizer report":
//   - load() accepts exactly the well-formed stores (an independent reading of the format here:
//     frame, CRC, version 1, count ≤ capacity, length = blob_bytes(count), every spend with finite
//     ε ≥ 0, δ in [0, 1), finite RDP ≥ 0 when it has a curve, a date in [2024, 2^40 s));
//   - a refused store gives kDataLoss, or kResourceExhausted only for a payload larger than the
//     ledger's scratch (more entries than its capacity), and locks the ledger: charge(), check()
//     and spent() are kFailedPrecondition and write nothing; reset_after_data_loss() then starts
//     from one spend of the whole budget (spent() = the budget, a further charge refused);
//   - an accepted store's spends in memory are the stored ones, bit for bit, and ledger_time() is
//     their latest date;
//   - a charge is refused only as kResourceExhausted (the spend and clock are valid) and then
//     changes neither memory nor storage; an accepted one keeps spent() within the budget, dates
//     the spend max(now, ledger_time()), and the saved ledger is well formed and loads again into
//     another ledger object with the same spends, time and spent().
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "platform/blob_format.h"
#include "platform/platform.h"
#include "platform/posix/posix_platform.h"
#include "sdk/base/bytes.h"
#include "sdk/base/crc32.h"
#include "sdk/privacy/budget_ledger.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

using fedstat::ByteSpan;
using fedstat::MutableByteSpan;
using fedstat::Span;
using fedstat::StatusCode;
using fedstat::privacy::BudgetLedger;
using fedstat::privacy::LedgerConfig;
using fedstat::privacy::PrivacySpend;

constexpr size_t kCapacity = 4;
constexpr size_t kScratchBytes = BudgetLedger::blob_bytes(kCapacity);
constexpr uint64_t kT0 = 1800000000;  // 2027-01-15: a plausible wall-clock reading
constexpr uint64_t kDay = 24 * 3600;
constexpr char kBlobName[] = "ledger";
const LedgerConfig kConfig{1.0, 1e-6, 30 * kDay, kBlobName};

// The storage directory: one per process, on tmpfs when there is one (saves fsync); removed at
// exit (kept in a static buffer, which outlives the atexit handler).
char g_storage[64] = "";
void remove_storage() {
  unlink((std::string(g_storage) + "/" + kBlobName).c_str());
  unlink((std::string(g_storage) + "/" + kBlobName + ".tmp").c_str());
  rmdir(g_storage);
}
const char* storage() {
  if (g_storage[0] != '\0') return g_storage;
  std::strcpy(g_storage, "/dev/shm/fedstat-ledger-fuzz-XXXXXX");
  if (mkdtemp(g_storage) == nullptr) {
    std::strcpy(g_storage, "/tmp/fedstat-ledger-fuzz-XXXXXX");
    FUZZ_CHECK(mkdtemp(g_storage) != nullptr);
  }
  FUZZ_CHECK(fedstat::platform::posix::set_storage_directory(g_storage).ok());
  std::atexit(remove_storage);
  return g_storage;
}
std::string blob_path() {
  return std::string(storage()) + "/" + kBlobName;
}

void write_file(const std::vector<uint8_t>& bytes) {
  const int fd = open(blob_path().c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  FUZZ_CHECK(fd >= 0);
  FUZZ_CHECK(write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
  FUZZ_CHECK(close(fd) == 0);
}
std::vector<uint8_t> read_file() {
  std::vector<uint8_t> bytes;
  const int fd = open(blob_path().c_str(), O_RDONLY | O_CLOEXEC);
  FUZZ_CHECK(fd >= 0);
  uint8_t buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof buffer)) > 0) bytes.insert(bytes.end(), buffer, buffer + n);
  FUZZ_CHECK(n == 0 && close(fd) == 0);
  return bytes;
}

// The payload framed as save_blob() frames it.
std::vector<uint8_t> framed(const uint8_t* payload, size_t size) {
  std::vector<uint8_t> out(fedstat::platform::kBlobOverheadBytes + size);
  std::memcpy(out.data(), fedstat::platform::kBlobMagic, 4);
  fedstat::store_le32(out.data() + 4, static_cast<uint32_t>(size));
  if (size != 0) std::memcpy(out.data() + 8, payload, size);
  fedstat::store_le32(out.data() + 8 + size, fedstat::crc32(ByteSpan(out.data(), 8 + size)));
  return out;
}

double double_of(uint64_t bits) {
  double x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}
uint64_t bits_of(double x) {
  uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

bool spend_is_possible(const PrivacySpend& s) {
  if (!(s.epsilon >= 0) || !std::isfinite(s.epsilon) || !(s.delta >= 0) || !(s.delta < 1)) {
    return false;
  }
  for (size_t k = 0; s.has_rdp && k < fedstat::privacy::kLedgerOrderCount; ++k) {
    if (!(s.rdp[k] >= 0) || !std::isfinite(s.rdp[k])) return false;
  }
  return s.time_seconds >= fedstat::privacy::kLedgerMinClockSeconds &&
         s.time_seconds < fedstat::privacy::kLedgerMaxClockSeconds;
}

bool same_spend(const PrivacySpend& a, const PrivacySpend& b) {
  if (a.time_seconds != b.time_seconds || a.task_id != b.task_id || a.has_rdp != b.has_rdp ||
      bits_of(a.epsilon) != bits_of(b.epsilon) || bits_of(a.delta) != bits_of(b.delta)) {
    return false;
  }
  for (size_t k = 0; k < fedstat::privacy::kLedgerOrderCount; ++k) {
    if (bits_of(a.rdp[k]) != bits_of(b.rdp[k])) return false;
  }
  return true;
}

// What a stored file holds, read independently of the SDK from the documented formats.
struct Reading {
  enum { kWellFormed, kCorrupt, kTooLarge } verdict = kCorrupt;
  std::vector<PrivacySpend> spends;
};
Reading read_store(const std::vector<uint8_t>& file) {
  namespace p = fedstat::platform;
  Reading r;
  if (file.size() < p::kBlobOverheadBytes || std::memcmp(file.data(), p::kBlobMagic, 4) != 0) {
    return r;
  }
  const size_t n = fedstat::load_le32(file.data() + 4);
  if (file.size() != n + p::kBlobOverheadBytes) return r;
  if (n > kScratchBytes) {
    r.verdict = Reading::kTooLarge;
    return r;
  }
  if (fedstat::crc32(ByteSpan(file.data(), 8 + n)) != fedstat::load_le32(file.data() + 8 + n)) {
    return r;
  }
  const uint8_t* q = file.data() + 8;
  if (n < 8 || fedstat::load_le32(q) != 1) return r;
  const size_t count = fedstat::load_le32(q + 4);
  if (count > kCapacity || n != BudgetLedger::blob_bytes(count)) return r;
  for (size_t i = 0; i < count; ++i) {
    const uint8_t* e = q + 8 + i * BudgetLedger::kEntryBytes;
    PrivacySpend s;
    s.time_seconds = fedstat::load_le64(e);
    s.task_id = fedstat::load_le32(e + 8);
    s.has_rdp = fedstat::load_le32(e + 12) != 0;
    s.epsilon = double_of(fedstat::load_le64(e + 16));
    s.delta = double_of(fedstat::load_le64(e + 24));
    for (size_t k = 0; k < fedstat::privacy::kLedgerOrderCount; ++k) {
      s.rdp[k] = double_of(fedstat::load_le64(e + 32 + 8 * k));
    }
    if (!spend_is_possible(s)) return r;
    r.spends.push_back(s);
  }
  r.verdict = Reading::kWellFormed;
  return r;
}

// A ledger "process": its own memory, as after a restart.
struct Device {
  Device() {
    FUZZ_CHECK(ledger
                   .init(kConfig, Span<PrivacySpend>(entries, kCapacity),
                         MutableByteSpan(scratch, sizeof scratch))
                   .ok());
  }
  PrivacySpend entries[kCapacity];
  uint8_t scratch[kScratchBytes];
  BudgetLedger ledger;
};

PrivacySpend task_spend(bool rdp) {
  PrivacySpend s;
  s.task_id = 0xF022;
  s.epsilon = rdp ? 0.0 : 0.05;
  s.delta = rdp ? 0.0 : 1e-8;
  s.has_rdp = rdp;
  for (size_t k = 0; rdp && k < fedstat::privacy::kLedgerOrderCount; ++k) {
    s.rdp[k] = 2e-4 * fedstat::privacy::kLedgerOrders[k];  // a Gaussian mechanism's α/(2σ²)
  }
  return s;
}

// The locked ledger refuses everything and writes nothing; the reset starts from the budget.
void check_locked(Device& d, const std::vector<uint8_t>& file, uint64_t now, bool rdp) {
  const PrivacySpend spend = task_spend(rdp);
  FUZZ_CHECK(d.ledger.charge(spend, now).code() == StatusCode::kFailedPrecondition);
  FUZZ_CHECK(d.ledger.check(spend, now).code() == StatusCode::kFailedPrecondition);
  FUZZ_CHECK(d.ledger.spent(now).status().code() == StatusCode::kFailedPrecondition);
  FUZZ_CHECK(read_file() == file);
  FUZZ_CHECK(d.ledger.reset_after_data_loss(now).ok());
  const auto spent = d.ledger.spent(now);
  FUZZ_CHECK(spent.ok() && spent->epsilon == kConfig.epsilon_budget &&
             spent->delta == kConfig.delta_budget);
  FUZZ_CHECK(d.ledger.charge(spend, now).code() == StatusCode::kResourceExhausted);
  Device again;
  FUZZ_CHECK(again.ledger.load().ok() && again.ledger.size() == 1);
}

void check_store(const std::vector<uint8_t>& file, uint64_t now, bool rdp) {
  write_file(file);
  const Reading reading = read_store(file);
  Device d;
  const fedstat::Status loaded = d.ledger.load();
  if (!loaded.ok()) {
    FUZZ_CHECK(reading.verdict != Reading::kWellFormed);
    FUZZ_CHECK(
        loaded.code() == StatusCode::kDataLoss ||
        (loaded.code() == StatusCode::kResourceExhausted && reading.verdict == Reading::kTooLarge));
    check_locked(d, file, now, rdp);
    return;
  }
  FUZZ_CHECK(reading.verdict == Reading::kWellFormed);
  FUZZ_CHECK(d.ledger.size() == reading.spends.size());
  uint64_t latest = 0;
  for (size_t i = 0; i < reading.spends.size(); ++i) {
    FUZZ_CHECK(spend_is_possible(d.entries[i]) && same_spend(d.entries[i], reading.spends[i]));
    latest = std::max(latest, d.entries[i].time_seconds);
  }
  FUZZ_CHECK(d.ledger.ledger_time() == latest);
  const auto before = d.ledger.spent(now);
  FUZZ_CHECK(before.ok() && before->epsilon >= 0 && before->delta >= 0);

  const PrivacySpend spend = task_spend(rdp);
  const uint64_t effective = std::max(now, latest);
  const fedstat::Status checked = d.ledger.check(spend, now);
  const fedstat::Status charged = d.ledger.charge(spend, now);
  FUZZ_CHECK(checked.code() == charged.code());
  if (!charged.ok()) {
    FUZZ_CHECK(charged.code() == StatusCode::kResourceExhausted);
    FUZZ_CHECK(d.ledger.size() == reading.spends.size() && d.ledger.ledger_time() == latest);
    for (size_t i = 0; i < reading.spends.size(); ++i) {
      FUZZ_CHECK(same_spend(d.entries[i], reading.spends[i]));
    }
    FUZZ_CHECK(read_file() == file);
    return;
  }
  const size_t count = d.ledger.size();
  FUZZ_CHECK(count >= 1 && count <= kCapacity && d.ledger.ledger_time() == effective);
  PrivacySpend dated = spend;
  dated.time_seconds = effective;
  FUZZ_CHECK(same_spend(d.entries[count - 1], dated));
  const auto after = d.ledger.spent(now);
  FUZZ_CHECK(after.ok() && after->epsilon <= kConfig.epsilon_budget &&
             after->delta <= kConfig.delta_budget);

  // The save round-trips: well formed, and another ledger loads the same spends.
  const std::vector<uint8_t> saved = read_file();
  const Reading resaved = read_store(saved);
  FUZZ_CHECK(resaved.verdict == Reading::kWellFormed && resaved.spends.size() == count);
  Device again;
  FUZZ_CHECK(again.ledger.load().ok());
  FUZZ_CHECK(again.ledger.size() == count && again.ledger.ledger_time() == effective);
  for (size_t i = 0; i < count; ++i) {
    FUZZ_CHECK(same_spend(again.entries[i], d.entries[i]));
    FUZZ_CHECK(same_spend(resaved.spends[i], d.entries[i]));
  }
  const auto reloaded = again.ledger.spent(now);
  FUZZ_CHECK(reloaded.ok() && bits_of(reloaded->epsilon) == bits_of(after->epsilon) &&
             bits_of(reloaded->delta) == bits_of(after->delta));
}

// ---- Seeds: ledgers the SDK saved, in both modes, and a few broken ones. -------------------

void add_seed(fedstat::fuzz::SeedWriter& out, const std::vector<uint8_t>& file, uint8_t clock) {
  std::vector<uint8_t> seed(1, static_cast<uint8_t>(clock << 2));
  seed.insert(seed.end(), file.begin(), file.end());
  out.add(seed);  // the file as stored
  if (file.size() < fedstat::platform::kBlobOverheadBytes) return;
  seed.assign(1, static_cast<uint8_t>((clock << 2) | 1 | 2));
  seed.insert(seed.end(), file.begin() + 8, file.end() - 4);
  out.add(seed);  // its payload, framed by the harness (CRC repair)
}

void write_seeds(fedstat::fuzz::SeedWriter& out) {
  unlink(blob_path().c_str());
  std::vector<std::vector<uint8_t>> ledgers;
  {
    Device d;
    FUZZ_CHECK(d.ledger.load().ok());
    FUZZ_CHECK(d.ledger.charge(task_spend(false), kT0).ok());
    ledgers.push_back(read_file());  // one (ε, δ) spend
    FUZZ_CHECK(d.ledger.charge(task_spend(true), kT0 + kDay).ok());
    FUZZ_CHECK(d.ledger.charge(task_spend(false), kT0 + 2 * kDay).ok());
    ledgers.push_back(read_file());  // three, one with an RDP curve
    FUZZ_CHECK(d.ledger.charge(task_spend(true), kT0 + 40 * kDay).ok());
    ledgers.push_back(read_file());  // the first three expired and dropped
    FUZZ_CHECK(d.ledger.charge(task_spend(false), kT0 + 41 * kDay).ok());
    FUZZ_CHECK(d.ledger.charge(task_spend(false), kT0 + 42 * kDay).ok());
    FUZZ_CHECK(d.ledger.charge(task_spend(true), kT0 + 43 * kDay).ok());
    ledgers.push_back(read_file());  // full
  }
  {
    write_file({0});  // corrupt: the ledger locks, and the reset writes the blackout spend
    Device d;
    FUZZ_CHECK(d.ledger.load().code() == StatusCode::kDataLoss);
    FUZZ_CHECK(d.ledger.reset_after_data_loss(kT0 + 5 * kDay).ok());
    ledgers.push_back(read_file());
  }
  {  // more spends than the fuzzed ledger holds (kResourceExhausted)
    unlink(blob_path().c_str());
    PrivacySpend entries[kCapacity + 2];
    uint8_t scratch[BudgetLedger::blob_bytes(kCapacity + 2)];
    BudgetLedger big;
    FUZZ_CHECK(big.init(kConfig, Span<PrivacySpend>(entries, kCapacity + 2),
                        MutableByteSpan(scratch, sizeof scratch))
                   .ok());
    FUZZ_CHECK(big.load().ok());
    for (uint64_t i = 0; i < kCapacity + 1; ++i) {
      FUZZ_CHECK(big.charge(task_spend(i % 2 == 1), kT0 + i * kDay).ok());
    }
    ledgers.push_back(read_file());
  }
  unlink(blob_path().c_str());
  for (size_t i = 0; i < ledgers.size(); ++i) {
    add_seed(out, ledgers[i], static_cast<uint8_t>(i * 3));
  }
  // Broken: truncated, one bit flipped (in the frame, a count, an ε), an unknown version.
  const std::vector<uint8_t>& good = ledgers[1];
  add_seed(out, std::vector<uint8_t>(good.begin(), good.end() - 1), 0);
  for (size_t at : {size_t{5}, size_t{12}, size_t{8 + 8 + 16 + 7}}) {
    std::vector<uint8_t> flipped = good;
    flipped[at] ^= 0x40;
    add_seed(out, flipped, 1);
  }
  std::vector<uint8_t> payload(good.begin() + 8, good.end() - 4);
  payload[0] = 2;
  add_seed(out, framed(payload.data(), payload.size()), 2);
  add_seed(out, framed(nullptr, 0), 2);
}

}  // namespace

FEDSTAT_FUZZ_SEEDS(write_seeds)

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  const uint64_t now = kT0 + static_cast<uint64_t>(mode >> 2) * 6 * kDay;
  const bool rdp = (mode & 2) != 0;
  const std::vector<uint8_t> file =
      (mode & 1) != 0 ? framed(data + 1, size - 1) : std::vector<uint8_t>(data + 1, data + size);
  check_store(file, now, rdp);
  return 0;
}
