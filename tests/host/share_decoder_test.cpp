// ShareDecoder (host_server/secagg/share_decoder.h): rebuilding a Shamir-shared secret from
// revealed shares of which some may be wrong, accepting a candidate only once it verifies.
// Shares are dealt with the SDK's ShamirDealer; "verified" is equality with the dealt secret,
// as the commitment check makes it.
#include "host_server/secagg/share_decoder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "sdk/base/seeded_stream.h"
#include "sdk/secagg/shamir.h"

namespace fedstat {
namespace host {
namespace {

using secagg::ShamirShare;

struct Dealt {
  uint8_t secret[32] = {};
  std::vector<ShamirShare> shares;  // ascending x
};

Dealt deal(uint8_t tag, uint32_t threshold, const std::vector<uint32_t>& holders) {
  Dealt d;
  for (int i = 0; i < 31; ++i) d.secret[i] = static_cast<uint8_t>(tag * 7 + i);
  uint8_t seed[32] = {tag, 1};
  secagg::ShamirDealer dealer;
  EXPECT_TRUE(dealer.init(ByteSpan(d.secret, 32), threshold, ByteSpan(seed, 32)).ok());
  for (uint32_t x : holders) {
    ShamirShare s;
    EXPECT_TRUE(dealer.share_for(x, s).ok());
    d.shares.push_back(s);
  }
  return d;
}

std::vector<uint32_t> ids(uint32_t first, uint32_t count) {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < count; ++i) out.push_back(first + i);
  return out;
}

// Counts its calls; true for `secret` only.
struct Check {
  const uint8_t* secret;
  int calls = 0;
  ShareDecoder::Verify fn() {
    return [this](ByteSpan candidate) -> Result<bool> {
      ++calls;
      return std::memcmp(candidate.data(), secret, 32) == 0;
    };
  }
};

void add_to(ShamirShare& s, size_t piece, uint32_t delta) {
  s.y[piece] = secagg::field_add(s.y[piece], delta);
}

TEST(ShareDecoder, HonestSharesVerifyOnceWhateverTheHolderSet) {
  const uint32_t t = 5;
  const std::vector<uint32_t> holders = ids(100, 9);
  SeededStream random(Seed256{}, 1);
  ShareDecoder decoder(t, holders, holders.size(), random);
  size_t trials = 100;
  // All nine holders, then sets missing some (the coefficients derived from U), down to t.
  for (const std::vector<size_t>& keep :
       {std::vector<size_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}, {0, 2, 3, 5, 6, 8}, {1, 4, 5, 7, 8}}) {
    const Dealt d = deal(static_cast<uint8_t>(keep.size()), t, holders);
    std::vector<ShamirShare> some;
    for (size_t i : keep) some.push_back(d.shares[i]);
    Check check{d.secret};
    const auto out = decoder.decode(some, check.fn(), trials);
    ASSERT_TRUE(out.ok()) << out.status().message();
    EXPECT_TRUE(out->ok());
    EXPECT_TRUE(out->holders.empty());
    EXPECT_EQ(0, std::memcmp(out->secret, d.secret, 32));
    EXPECT_EQ(check.calls, 1);
  }
  EXPECT_EQ(trials, 100u);
}

TEST(ShareDecoder, OneWrongShareFromTPlusTwoIsLocatedPerPieceAndDisputed) {
  const uint32_t t = 4;
  const std::vector<uint32_t> holders = ids(500, 7);
  SeededStream random(Seed256{}, 2);
  ShareDecoder decoder(t, holders, holders.size(), random);
  size_t trials = 0;  // not needed from t + 2 on
  Dealt d = deal(3, t, holders);
  add_to(d.shares[2], 0, 1);     // holder 502, piece 0
  add_to(d.shares[5], 8, 4321);  // holder 505, the last piece: another holder, another piece
  Check check{d.secret};
  const auto out = decoder.decode(d.shares, check.fn(), trials);
  ASSERT_TRUE(out.ok());
  ASSERT_TRUE(out->ok()) << static_cast<int>(out->failure);
  EXPECT_EQ(0, std::memcmp(out->secret, d.secret, 32));
  EXPECT_EQ(out->holders, (std::vector<uint32_t>{502, 505}));
  // The rebuild from all shares breaks the last piece's 8-bit width, so only the decoded
  // candidate reaches the check.
  EXPECT_EQ(check.calls, 1);
}

TEST(ShareDecoder, TwoWrongSharesOfOnePieceAreNotGuessedAt) {
  const uint32_t t = 4;
  const std::vector<uint32_t> holders = ids(500, 7);  // m = t + 3: one error within reach
  SeededStream random(Seed256{}, 3);
  ShareDecoder decoder(t, holders, holders.size(), random);
  size_t trials = 100;
  Dealt d = deal(4, t, holders);
  add_to(d.shares[1], 0, 7);
  add_to(d.shares[2], 0, 7);
  Check check{d.secret};
  const auto out = decoder.decode(d.shares, check.fn(), trials);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->failure, DecodedSecret::Failure::kNotOneWrongShare);
  EXPECT_EQ(out->holders, holders);
}

TEST(ShareDecoder, OneWrongShareAmongTPlusOneIsFoundByTryingTheSubsets) {
  const uint32_t t = 5;
  const std::vector<uint32_t> holders = ids(20, 6);  // m = t + 1
  SeededStream random(Seed256{}, 4);
  ShareDecoder decoder(t, holders, holders.size(), random);
  size_t trials = 100;
  for (uint8_t round = 0; round < 2; ++round) {
    Dealt d = deal(static_cast<uint8_t>(10 + round), t, holders);
    add_to(d.shares[4], 3, 99);  // holder 24, in both secrets
    Check check{d.secret};
    const auto out = decoder.decode(d.shares, check.fn(), trials);
    ASSERT_TRUE(out.ok());
    ASSERT_TRUE(out->ok());
    EXPECT_EQ(0, std::memcmp(out->secret, d.secret, 32));
    EXPECT_EQ(out->holders, (std::vector<uint32_t>{24}));
    // The second time, holder 24 (disputed before) is left out first: one trial.
    if (round == 1) {
      EXPECT_EQ(check.calls, 2);
    }
  }
  EXPECT_LT(trials, 100u);
}

TEST(ShareDecoder, WhatCannotBeVerifiedFailsWithTheReason) {
  const uint32_t t = 3;
  const std::vector<uint32_t> holders = ids(1, 5);
  SeededStream random(Seed256{}, 5);
  ShareDecoder decoder(t, holders, holders.size(), random);
  size_t trials = 100;
  {  // exactly t, one wrong
    Dealt d = deal(20, t, {1, 2, 3});
    add_to(d.shares[0], 0, 1);
    Check check{d.secret};
    const auto out = decoder.decode(d.shares, check.fn(), trials);
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(out->failure, DecodedSecret::Failure::kExactlyT);
    EXPECT_EQ(out->holders, (std::vector<uint32_t>{1, 2, 3}));
  }
  {  // consistent shares of another secret (what a lying dealer or m − t + 1 colluders give)
    Dealt d = deal(21, t, holders);
    Dealt other = deal(22, t, holders);
    Check check{other.secret};
    const auto out = decoder.decode(d.shares, check.fn(), trials);
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(out->failure, DecodedSecret::Failure::kAgreeButWrong);
  }
  {  // t + 1 with two wrong: no subset verifies, each candidate tried once
    // (+1 and +1 at holders 1 and 4 would cancel in the only check, v_1 = −v_4 = −1/6: the
    // shares would fit another polynomial — kAgreeButWrong.)
    Dealt d = deal(23, t, {1, 2, 3, 4});
    add_to(d.shares[0], 0, 1);
    add_to(d.shares[3], 0, 2);
    Check check{d.secret};
    const auto out = decoder.decode(d.shares, check.fn(), trials);
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(out->failure, DecodedSecret::Failure::kNoSubsetVerifies);
    EXPECT_EQ(check.calls, 1 + 4);
  }
  {  // the trial budget spent
    Dealt d = deal(24, t, {1, 2, 3, 4});
    add_to(d.shares[1], 0, 1);
    size_t none = 0;
    Check check{d.secret};
    const auto out = decoder.decode(d.shares, check.fn(), none);
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(out->failure, DecodedSecret::Failure::kTrialBudgetSpent);
  }
}

TEST(ShareDecoder, SharesThatBreakTheContractAreRefused) {
  const std::vector<uint32_t> holders = ids(1, 4);
  SeededStream random(Seed256{}, 6);
  ShareDecoder decoder(2, holders, holders.size(), random);
  size_t trials = 10;
  Dealt d = deal(30, 2, holders);
  Check check{d.secret};
  std::vector<ShamirShare> swapped = {d.shares[1], d.shares[0]};
  EXPECT_EQ(decoder.decode(swapped, check.fn(), trials).status().code(),
            StatusCode::kInvalidArgument);
  std::vector<ShamirShare> stranger = {d.shares[0], d.shares[1]};
  stranger[1].x = 9;  // not a holder
  EXPECT_EQ(decoder.decode(stranger, check.fn(), trials).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(decoder.decode({d.shares[0]}, check.fn(), trials).status().code(),
            StatusCode::kInvalidArgument);  // fewer than t
  std::vector<ShamirShare> out_of_field = {d.shares[0], d.shares[1]};
  out_of_field[0].y[0] = secagg::kShamirPrime;
  EXPECT_EQ(decoder.decode(out_of_field, check.fn(), trials).status().code(),
            StatusCode::kDataLoss);
  EXPECT_THROW(ShareDecoder(2, {3, 2}, 2, random), std::invalid_argument);
  EXPECT_THROW(ShareDecoder(2, {1, 2}, 3, random), std::invalid_argument);
}

}  // namespace
}  // namespace host
}  // namespace fedstat
