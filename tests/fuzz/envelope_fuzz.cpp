// Fuzz target: the wire's decoders, which take bytes from any peer — decode_envelope (one
// message), decode_frame (a frame at the front of what has arrived) and take_frame (the
// receiver's reassembly loop). Invariants beyond "no crash":
//   - a refused input leaves the output envelope untouched;
//   - a decoded envelope re-encodes, and that encoding decodes to the same encoding (canonical);
//   - decode_frame's verdict does not depend on how the bytes arrive: every prefix of the input
//     is "incomplete" or gets the whole input's verdict (the same error, or the same frame);
//   - take_frame consumes exactly the frames decode_frame finds, and keeps the rest.
#include <cstring>
#include <vector>

#include "sdk/wire/envelope_codec.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

using fedstat::ByteSpan;
using fedstat::MutableByteSpan;
using fedstat::wire::Envelope;

// An envelope filled with a byte pattern: an unchanged output is still exactly this.
Envelope sentinel() {
  Envelope e;
  std::memset(&e, 0xA5, sizeof e);
  return e;
}
bool is_sentinel(const Envelope& e) {
  const Envelope s = sentinel();
  return std::memcmp(&e, &s, sizeof e) == 0;
}

std::vector<uint8_t> encoding_of(const Envelope& e) {
  std::vector<uint8_t> out(fedstat::wire::kMaxEnvelopeBytes);
  auto n = fedstat::wire::encode_envelope(e, MutableByteSpan(out.data(), out.size()));
  FUZZ_CHECK(n.ok());  // whatever decodes must encode
  out.resize(n.value());
  return out;
}

void check_envelope(const uint8_t* data, size_t size) {
  Envelope e = sentinel();
  const fedstat::Status s = fedstat::wire::decode_envelope(ByteSpan(data, size), e);
  if (!s.ok()) {
    FUZZ_CHECK(is_sentinel(e));
    return;
  }
  const std::vector<uint8_t> once = encoding_of(e);
  Envelope again = sentinel();
  FUZZ_CHECK(fedstat::wire::decode_envelope(ByteSpan(once.data(), once.size()), again).ok());
  FUZZ_CHECK(encoding_of(again) == once);
}

void check_frames(const uint8_t* data, size_t size) {
  Envelope whole = sentinel();
  const auto verdict = fedstat::wire::decode_frame(ByteSpan(data, size), whole);
  if (!verdict.ok() || !verdict->complete) FUZZ_CHECK(is_sentinel(whole));
  const size_t consumed = verdict.ok() && verdict->complete ? verdict->consumed : 0;
  if (consumed != 0) FUZZ_CHECK(consumed <= size);
  // Every prefix: incomplete, or the whole input's verdict.
  for (size_t k = 0; k < size; ++k) {
    Envelope part = sentinel();
    const auto r = fedstat::wire::decode_frame(ByteSpan(data, k), part);
    if (r.ok() && !r->complete) {
      FUZZ_CHECK(is_sentinel(part));
      FUZZ_CHECK(consumed == 0 || k < consumed);
      continue;
    }
    if (!r.ok()) {
      FUZZ_CHECK(!verdict.ok() && r.status().code() == verdict.status().code());
      FUZZ_CHECK(is_sentinel(part));
      continue;
    }
    FUZZ_CHECK(consumed != 0 && r->consumed == consumed && k >= consumed);
    FUZZ_CHECK(encoding_of(part) == encoding_of(whole));
  }
  // The reassembly loop over the input: each frame it takes is the one decode_frame finds there.
  std::vector<uint8_t> buffer(fedstat::wire::kMaxFrameBytes);
  size_t offset = 0;
  while (offset < size) {
    const size_t chunk = std::min(size - offset, buffer.size());
    std::memcpy(buffer.data(), data + offset, chunk);
    size_t buffered = chunk;
    Envelope taken = sentinel(), expected = sentinel();
    const auto t =
        fedstat::wire::take_frame(MutableByteSpan(buffer.data(), buffer.size()), buffered, taken);
    const auto d = fedstat::wire::decode_frame(ByteSpan(data + offset, chunk), expected);
    if (!t.ok() || !t.value()) {
      FUZZ_CHECK(is_sentinel(taken));
      if (!t.ok() && !d.ok()) FUZZ_CHECK(t.status().code() == d.status().code());
      if (t.ok()) FUZZ_CHECK(buffered == chunk && d.ok() && !d->complete);
      break;
    }
    FUZZ_CHECK(d.ok() && d->complete && buffered == chunk - d->consumed);
    FUZZ_CHECK(encoding_of(taken) == encoding_of(expected));
    FUZZ_CHECK(std::memcmp(buffer.data(), data + offset + d->consumed, buffered) == 0);
    offset += d->consumed;
  }
}

void write_seeds(fedstat::fuzz::SeedWriter& out) {
  // One envelope of every message kind (tags 2..20), empty and then with small values, framed.
  uint8_t frame[fedstat::wire::kMaxFrameBytes];
  for (pb_size_t tag = 2; tag <= 20; ++tag) {
    for (int filled = 0; filled < 2; ++filled) {
      Envelope e = fedstat::wire::make_envelope();
      e.which_body = tag;
      if (filled != 0) std::memset(&e.body, 0, sizeof e.body);
      if (filled != 0 && tag == fedstat_v1_Envelope_client_hello_tag) {
        e.body.client_hello.client_id = 7;
        std::strcpy(e.body.client_hello.sdk_version, "0.1.0");
      }
      if (filled != 0 && tag == fedstat_v1_Envelope_secagg_masked_chunk_tag) {
        e.body.secagg_masked_chunk.session = 99;
        e.body.secagg_masked_chunk.words_count = 3;
        e.body.secagg_masked_chunk.words[2] = UINT64_MAX;
      }
      auto n = fedstat::wire::encode_frame(e, MutableByteSpan(frame, sizeof frame));
      if (!n.ok()) continue;
      out.add(frame, n.value());
      out.add(frame + 1, n.value() - 1);  // the bare message, as decode_envelope takes it
    }
  }
  const uint8_t padded_prefix[] = {0x85, 0x00, 0x08, 0x01};
  const uint8_t huge_prefix[] = {0xff, 0xff, 0xff, 0xff, 0x0f};
  out.add(padded_prefix, sizeof padded_prefix);
  out.add(huge_prefix, sizeof huge_prefix);
}

}  // namespace

FEDSTAT_FUZZ_SEEDS(write_seeds)

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  check_envelope(data, size);
  check_frames(data, size);
  return 0;
}
