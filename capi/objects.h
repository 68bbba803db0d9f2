// Internal to the C ABI (never installed): the layouts of the handles that more than one C ABI
// source reads (a histogram feeds the sketch, the KL answer and the Client; a random source and
// a ledger feed the tasks and the Client). The opaque C types of fedstat.h are these structs.
//
// Memory: sizeof of each struct, rounded up to 8 (handle.h), in front of the caller's arrays.
// Paper: none.
#ifndef FEDSTAT_CAPI_OBJECTS_H_
#define FEDSTAT_CAPI_OBJECTS_H_

#include <stdint.h>

#include "capi/handle.h"
#include "sdk/base/csprng.h"
#include "sdk/base/random_bits.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/histogram/dense_histogram.h"
#include "sdk/histogram/sparse_histogram.h"
#include "sdk/privacy/budget_ledger.h"

// Followed by the counters (dense: 4·domain bytes) or the table (sparse: 8·capacity bytes).
struct fedstat_histogram {
  uint32_t magic = fedstat::capi::kHistogramMagic;
  int32_t kind = FEDSTAT_HISTOGRAM_DENSE;
  const char* last_error = "";
  fedstat::histogram::DenseHistogram dense;
  fedstat::histogram::SparseHistogram sparse;
};

// The source (a SeededStream or a Csprng, built in place) and one bit reader over it.
struct fedstat_random {
  static constexpr size_t kSourceBytes = sizeof(fedstat::SeededStream) > sizeof(fedstat::Csprng)
                                             ? sizeof(fedstat::SeededStream)
                                             : sizeof(fedstat::Csprng);
  static constexpr size_t kSourceAlign = alignof(fedstat::SeededStream) > alignof(fedstat::Csprng)
                                             ? alignof(fedstat::SeededStream)
                                             : alignof(fedstat::Csprng);

  uint32_t magic = fedstat::capi::kRandomMagic;
  bool csprng = false;
  const char* last_error = "";
  fedstat::RandomSource* source = nullptr;
  fedstat::RandomBits* bits = nullptr;
  alignas(kSourceAlign) unsigned char source_storage[kSourceBytes];
  alignas(fedstat::RandomBits) unsigned char bits_storage[sizeof(fedstat::RandomBits)];
};

// Followed by the spends (capacity · sizeof(PrivacySpend)), then the blob scratch.
struct fedstat_ledger {
  uint32_t magic = fedstat::capi::kLedgerMagic;
  const char* last_error = "";
  char blob_name[fedstat::capi::kNameBytes] = {};
  fedstat::privacy::BudgetLedger ledger;
};

#endif  // FEDSTAT_CAPI_OBJECTS_H_
