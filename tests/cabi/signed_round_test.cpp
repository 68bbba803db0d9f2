// Device credentials through the C ABI (c/credential.h, issue 42): a C ABI Client given its
// credential as fedstat-ca's text takes part in a signed DIST round of the server's real rounds
// (tests/client/in_process_server.h: host::Coordinator with the CA's public key) beside three C++
// Clients, over a fedstat_channel that carries the frames as bytes. The published sum must be
// all four devices' contributions bit for bit (computed from the SDK routines with the seeds the
// devices use), with four consistency signatures stored; a C Client without a credential leaves
// a signed session with FEDSTAT_FAILED_PRECONDITION, and one with a credential leaves an unsigned
// session with FEDSTAT_PERMISSION_DENIED, the others completing without it. A credential whose
// key is not its certificate's, or whose certificate another CA issued or names another id, is
// refused with its documented status and changes nothing. Paper: Bonawitz et al. 2017 §4.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "fedstat/fedstat.h"
#include "host_server/credential/fleet_credentials.h"
#include "host_server/hex.h"
#include "host_server/rounds/messages.h"
#include "sdk/client/contribution.h"
#include "tests/cabi/c_device.h"
#include "tests/client/client_test_support.h"
#include "tests/client/in_process_server.h"
#include "tests/rounds/round_messages.h"

namespace fedstat {
namespace client_test {
namespace {

constexpr size_t kDevices = 4;  // threshold 3: 2t > n + ceil(5 % of n), the signed bound

// A fedstat_channel over an InProcessServer link: the bytes the C Client sends are cut into
// frames and delivered as messages; the server's messages are handed out as frame bytes, at most
// 7 bytes per receive call.
struct Bridge {
  std::unique_ptr<InProcessServer::Link> link;
  std::vector<uint8_t> sent;     // bytes of a frame not yet whole
  std::deque<uint8_t> received;  // frame bytes not yet handed out

  fedstat_channel channel() {
    fedstat_channel c;
    c.context = this;
    c.send = &Bridge::send;
    c.receive = &Bridge::receive;
    c.close = &Bridge::close;
    return c;
  }

  static fedstat_status send(void* context, const uint8_t* bytes, size_t size) {
    Bridge& b = *static_cast<Bridge*>(context);
    b.sent.insert(b.sent.end(), bytes, bytes + size);
    for (;;) {
      wire::Envelope message;
      const Result<wire::FrameResult> r =
          wire::decode_frame(ByteSpan(b.sent.data(), b.sent.size()), message);
      if (!r.ok()) return FEDSTAT_DATA_LOSS;
      if (!r.value().complete) return FEDSTAT_OK;
      b.sent.erase(b.sent.begin(), b.sent.begin() + static_cast<std::ptrdiff_t>(r->consumed));
      if (!b.link->send(message).ok()) return FEDSTAT_UNAVAILABLE;
    }
  }

  static fedstat_status receive(void* context, uint8_t* buffer, size_t capacity, size_t* received,
                                uint32_t timeout_ms) {
    Bridge& b = *static_cast<Bridge*>(context);
    if (b.received.empty()) {
      wire::Envelope message;
      const Status s = b.link->receive(message, timeout_ms);
      if (!s.ok()) return static_cast<fedstat_status>(s.code());
      std::vector<uint8_t> frame(wire::kMaxFrameBytes);
      const Result<size_t> n =
          wire::encode_frame(message, MutableByteSpan(frame.data(), frame.size()));
      if (!n.ok()) return FEDSTAT_INTERNAL;
      b.received.insert(b.received.end(), frame.begin(),
                        frame.begin() + static_cast<std::ptrdiff_t>(n.value()));
    }
    const size_t n = std::min({capacity, size_t{7}, b.received.size()});
    std::copy(b.received.begin(), b.received.begin() + static_cast<std::ptrdiff_t>(n), buffer);
    b.received.erase(b.received.begin(), b.received.begin() + static_cast<std::ptrdiff_t>(n));
    *received = n;
    return FEDSTAT_OK;
  }

  static void close(void* context) { static_cast<Bridge*>(context)->link->close(); }
};

// A credential as the text fedstat-ca writes: the private key, the certificate line
// (`fedstat-ca sign`'s) and the CA's public key.
struct CredentialText {
  std::string private_key, certificate, ca_public_key;
};

CredentialText text_of(const credential::DeviceCredential& c) {
  const credential::DeviceCertificate& cert = c.certificate;
  return {host::encode_hex(c.private_key, sizeof(c.private_key)),
          std::to_string(cert.client_id) + " " +
              host::encode_hex(cert.public_key, sizeof(cert.public_key)) + " " +
              host::encode_hex(cert.ca_signature, sizeof(cert.ca_signature)),
          host::encode_hex(c.ca_public_key, sizeof(c.ca_public_key))};
}

int has_credential(const CDevice& device) {
  int has = -1;
  EXPECT_EQ(fedstat_client_has_credential(device.client, &has), FEDSTAT_OK);
  return has;
}

class CabiSignedRound : public StorageTest {
 protected:
  void SetUp() override {
    StorageTest::SetUp();
    ASSERT_EQ(fedstat_set_storage_directory(directory_.c_str()), FEDSTAT_OK);
    task = kl_task(fedstat_v1_TrustModel_DIST, points);
    make_dist(task, kDevices, 3);
    uint64_t seed = 7;
    ca = host::make_ca_key(&seed);
    for (size_t c = 0; c < kDevices; ++c) {
      credentials.push_back(host::issue_device_credential(ca, static_cast<uint32_t>(c + 1), &seed));
      histograms.push_back(std::make_unique<OwnedHistogram>(static_cast<uint32_t>(c + 1)));
      apps.push_back(std::make_unique<HistogramData>(&histograms.back()->histogram));
    }
    // A seeded CSPRNG stand-in that only blinds the credential checks (not a device's stream).
    size_t bytes = 0;
    ASSERT_EQ(fedstat_random_size(&bytes), FEDSTAT_OK);
    blinding_memory.resize(bytes / 8 + 1);
    ASSERT_EQ(fedstat_random_create_seeded(blinding_memory.data(), bytes, test_seed(5).bytes, 0,
                                           &blinding),
              FEDSTAT_OK);
  }

  // Device 1 + the others' contributions, as the SDK routines compute them.
  std::vector<uint64_t> expected_sum(bool with_device_1) const {
    std::vector<uint64_t> sum;
    for (size_t c = with_device_1 ? 0 : 1; c < kDevices; ++c) {
      CountingSource same(test_seed(99), c + 1);
      const std::vector<uint64_t> x = expected_kl(task, points, histograms[c]->histogram, same);
      sum.resize(x.size(), 0);
      for (size_t i = 0; i < x.size(); ++i) sum[i] += x[i];  // bits = 64: mod 2^64
    }
    return sum;
  }

  host::TaskSpec spec(bool signed_session) const {
    host::TaskSpec s;
    s.task = task;
    s.data = points;
    s.task.deadline_unix_seconds = 0;
    s.admission_seconds = 30;
    s.estimate = host::testing::sum_json;
    s.definition_json = "{\"task\":" + std::to_string(task.task_id) + "}";
    if (signed_session) s.secagg_ca_public_key = ca.public_key;
    return s;
  }

  fedstat_status set(CDevice& device, const CredentialText& t) {
    return fedstat_client_set_credential(device.client, t.private_key.c_str(),
                                         t.certificate.c_str(), t.ca_public_key.c_str(), blinding);
  }

  // One round: device 1 is the C Client `c_device` (its last status and outcome returned), the
  // others C++ Clients with their credentials; each runs sessions until one ends other than with
  // no task (at most 12).
  struct CRun {
    fedstat_status status = FEDSTAT_INTERNAL;
    fedstat_session_outcome outcome = {-1, 0};
  };
  // `cut_after` (0: never): the C Client's first link is cut after that many messages, and
  // `on_lost` runs before it checks in again (the Client then holds a pending round).
  CRun run(InProcessServer& server, CDevice& c_device, bool others_certified,
           std::vector<Result<client::SessionOutcome>>& others, size_t cut_after = 0,
           const std::function<void()>& on_lost = nullptr) {
    std::vector<std::unique_ptr<Device>> devices;
    for (size_t c = 1; c < kDevices; ++c) {
      devices.push_back(std::make_unique<Device>(c + 1, 1 << 20, *apps[c], 10, nullptr, 1,
                                                 others_certified ? &credentials[c] : nullptr));
      EXPECT_TRUE(devices.back()->init_status.ok());
    }
    others.assign(kDevices - 1, failed_precondition("not run"));
    CRun mine;
    std::vector<std::thread> threads;
    threads.emplace_back([&] {
      for (int session = 0; session < 12; ++session) {
        Bridge bridge{server.connect(1), {}, {}};
        if (session == 0) bridge.link->cut_after_sends = cut_after;
        const fedstat_channel channel = bridge.channel();
        mine.status = fedstat_client_run_session(c_device.client, &channel, &mine.outcome);
        if (mine.status == FEDSTAT_UNAVAILABLE && session == 0 && cut_after != 0) {
          if (on_lost) on_lost();
          continue;  // check in again: the Client resumes its round
        }
        if (mine.status != FEDSTAT_OK || mine.outcome.result != FEDSTAT_SESSION_NO_TASK) break;
      }
    });
    for (size_t c = 1; c < kDevices; ++c) {
      threads.emplace_back([&, c] {
        for (int session = 0; session < 12; ++session) {
          auto link = server.connect(c + 1);
          others[c - 1] = devices[c - 1]->client.run_session(*link);
          if (!others[c - 1].ok() || others[c - 1]->result != client::SessionResult::kNoTask) {
            break;
          }
        }
      });
    }
    for (auto& t : threads) t.join();
    return mine;
  }

  size_t stored_consistency_signatures(InProcessServer& server) {
    size_t n = 0;
    for (const auto& e : server.store().all_events()) {
      if (e.kind == host::EventKind::kDeviceMessage &&
          host::decode_bytes(e.payload).which_body == fedstat_v1_Envelope_secagg_consistency_tag) {
        ++n;
      }
    }
    return n;
  }

  host::CaKey ca;
  std::vector<credential::DeviceCredential> credentials;
  fedstat_v1_Task task;
  std::vector<uint64_t> points;
  std::vector<std::unique_ptr<OwnedHistogram>> histograms;
  std::vector<std::unique_ptr<HistogramData>> apps;
  std::vector<uint64_t> blinding_memory;
  fedstat_random* blinding = nullptr;
};

TEST_F(CabiSignedRound, ACredentialedCClientCompletesASignedRoundBitForBit) {
  CDevice device(1, 1 << 20);
  CHistogram data(1);
  ASSERT_EQ(fedstat_client_set_histogram(device.client, data.histogram), FEDSTAT_OK);
  ASSERT_EQ(has_credential(device), 0);
  ASSERT_EQ(set(device, text_of(credentials[0])), FEDSTAT_OK)
      << fedstat_client_last_error(device.client);
  ASSERT_EQ(has_credential(device), 1);

  InProcessServer server({spec(true)}, host::testing::kT0);
  std::vector<Result<client::SessionOutcome>> others;
  const CRun mine = run(server, device, true, others);
  ASSERT_EQ(mine.status, FEDSTAT_OK) << fedstat_client_last_error(device.client);
  EXPECT_EQ(mine.outcome.result, FEDSTAT_SESSION_COMPLETED);
  for (const auto& o : others) {
    ASSERT_TRUE(o.ok()) << o.status().message();
    EXPECT_EQ(o->result, client::SessionResult::kCompleted);
  }
  ASSERT_EQ(server.task_state(task.task_id), "completed");
  EXPECT_EQ(server.store().result(task.task_id).value_or(""),
            host::testing::sum_json(expected_sum(true), kDevices));
  EXPECT_EQ(stored_consistency_signatures(server), kDevices) << "the session was signed";
}

// A round cut by a lost link is pending: the credential it started with cannot be replaced or
// removed until it ends (FEDSTAT_FAILED_PRECONDITION, the credential kept), the resumed round
// completes bit for bit, and then the credential can be changed again. The cut comes after the
// C Client's keys, shares and masked input (hello, reply, keys, 3 shares, 2 chunks: send 8).
TEST_F(CabiSignedRound, APendingRoundKeepsItsCredentialUntilItEnds) {
  CDevice device(1, 1 << 20);
  CHistogram data(1);
  ASSERT_EQ(fedstat_client_set_histogram(device.client, data.histogram), FEDSTAT_OK);
  const CredentialText good = text_of(credentials[0]);
  ASSERT_EQ(set(device, good), FEDSTAT_OK);
  fedstat_status replaced = FEDSTAT_INTERNAL, removed = FEDSTAT_INTERNAL;
  uint32_t pending = 0;
  int held = -1;
  InProcessServer server({spec(true)}, host::testing::kT0);
  std::vector<Result<client::SessionOutcome>> others;
  const CRun mine = run(server, device, true, others, 8, [&] {
    fedstat_client_state state;
    EXPECT_EQ(fedstat_client_get_state(device.client, &state), FEDSTAT_OK);
    pending = state.pending_report_task;
    replaced = set(device, good);
    removed = fedstat_client_set_credential(device.client, nullptr, nullptr, nullptr, nullptr);
    held = has_credential(device);
  });
  EXPECT_EQ(pending, task.task_id);
  EXPECT_EQ(replaced, FEDSTAT_FAILED_PRECONDITION);
  EXPECT_EQ(removed, FEDSTAT_FAILED_PRECONDITION);
  EXPECT_EQ(held, 1);
  ASSERT_EQ(mine.status, FEDSTAT_OK) << fedstat_client_last_error(device.client);
  EXPECT_EQ(mine.outcome.result, FEDSTAT_SESSION_COMPLETED);
  ASSERT_EQ(server.task_state(task.task_id), "completed");
  EXPECT_EQ(server.store().result(task.task_id).value_or(""),
            host::testing::sum_json(expected_sum(true), kDevices));
  EXPECT_EQ(fedstat_client_set_credential(device.client, nullptr, nullptr, nullptr, nullptr),
            FEDSTAT_OK);
  EXPECT_EQ(has_credential(device), 0);
}

// The credential and the session must agree: a C Client without one leaves a signed session
// (FEDSTAT_FAILED_PRECONDITION), one with a credential leaves an unsigned session
// (FEDSTAT_PERMISSION_DENIED); either way after accepting (the Task does not say whether the
// session is signed), and the other three complete without it.
TEST_F(CabiSignedRound, ACredentialAndTheSessionMustAgreeOrTheCClientLeaves) {
  for (bool server_signs : {true, false}) {
    const std::string label = server_signs ? "signed session" : "unsigned session";
    // Every device starts afresh: no ledger spend of the task, no round marker.
    for (const char* blob : {"cabi-ledger-1", "cabi-round-1", "ledger-2", "round-2", "ledger-3",
                             "round-3", "ledger-4", "round-4"}) {
      platform::remove_blob(blob).ignore();
    }
    CDevice device(1, 1 << 20);
    CHistogram data(1);
    ASSERT_EQ(fedstat_client_set_histogram(device.client, data.histogram), FEDSTAT_OK);
    if (!server_signs) {
      ASSERT_EQ(set(device, text_of(credentials[0])), FEDSTAT_OK);
    }
    InProcessServer server({spec(server_signs)}, host::testing::kT0);
    std::vector<Result<client::SessionOutcome>> others;
    const CRun mine = run(server, device, server_signs, others);
    EXPECT_EQ(mine.status, server_signs ? FEDSTAT_FAILED_PRECONDITION : FEDSTAT_PERMISSION_DENIED)
        << label << ": " << fedstat_client_last_error(device.client);
    for (const auto& o : others) {
      ASSERT_TRUE(o.ok()) << label << ": " << o.status().message();
      EXPECT_EQ(o->result, client::SessionResult::kCompleted) << label;
    }
    ASSERT_EQ(server.task_state(task.task_id), "completed") << label;
    EXPECT_EQ(server.store().result(task.task_id).value_or(""),
              host::testing::sum_json(expected_sum(false), kDevices - 1))
        << label;
  }
}

TEST_F(CabiSignedRound, SetCredentialRefusesWhatItCannotUseAndKeepsTheOneItHolds) {
  CDevice device(1, 1 << 20);
  const CredentialText good = text_of(credentials[0]);
  auto expect_refused = [&](const CredentialText& t, fedstat_status code, const char* says,
                            const std::string& label) {
    EXPECT_EQ(set(device, t), code) << label;
    EXPECT_NE(std::string(fedstat_client_last_error(device.client)).find(says), std::string::npos)
        << label << ": " << fedstat_client_last_error(device.client);
  };
  auto refusals = [&](int holds) {
    // Device 2's signing key with device 1's certificate: the key is not the certificate's.
    CredentialText wrong_key = good;
    wrong_key.private_key = text_of(credentials[1]).private_key;
    expect_refused(wrong_key, FEDSTAT_PERMISSION_DENIED, "does not match", "another key");
    // The same device under another CA: the certificate does not verify under this one.
    uint64_t other_seed = 8;
    const host::CaKey other = host::make_ca_key(&other_seed);
    CredentialText other_ca = good;
    other_ca.ca_public_key = host::encode_hex(other.public_key.data(), other.public_key.size());
    expect_refused(other_ca, FEDSTAT_PERMISSION_DENIED, "does not verify", "another CA");
    // Device 2's whole credential: valid, but for another id than the Client's.
    expect_refused(text_of(credentials[1]), FEDSTAT_INVALID_ARGUMENT, "another client id",
                   "another id");
    // Malformed text: each field short, long, not hex, or with a field more or less.
    for (CredentialText t :
         {CredentialText{good.private_key.substr(1), good.certificate, good.ca_public_key},
          CredentialText{good.private_key + "0", good.certificate, good.ca_public_key},
          CredentialText{"0x" + good.private_key.substr(2), good.certificate, good.ca_public_key},
          CredentialText{good.private_key, good.certificate + " 00", good.ca_public_key},
          CredentialText{good.private_key, good.certificate.substr(2), good.ca_public_key},
          CredentialText{good.private_key, "0 " + good.certificate.substr(2), good.ca_public_key},
          CredentialText{good.private_key, "-1 " + good.certificate.substr(2), good.ca_public_key},
          CredentialText{good.private_key, good.certificate, good.ca_public_key.substr(2)},
          CredentialText{good.private_key, good.certificate, "g" + good.ca_public_key.substr(1)}}) {
      EXPECT_EQ(set(device, t), FEDSTAT_INVALID_ARGUMENT)
          << t.private_key << " | " << t.certificate << " | " << t.ca_public_key;
    }
    EXPECT_EQ(fedstat_client_set_credential(device.client, good.private_key.c_str(), nullptr,
                                            good.ca_public_key.c_str(), blinding),
              FEDSTAT_INVALID_ARGUMENT);
    EXPECT_EQ(fedstat_client_set_credential(device.client, good.private_key.c_str(),
                                            good.certificate.c_str(), good.ca_public_key.c_str(),
                                            nullptr),
              FEDSTAT_INVALID_ARGUMENT);
    EXPECT_EQ(
        fedstat_client_set_credential(nullptr, good.private_key.c_str(), good.certificate.c_str(),
                                      good.ca_public_key.c_str(), blinding),
        FEDSTAT_INVALID_ARGUMENT);
    EXPECT_EQ(has_credential(device), holds) << "a refusal changes nothing";
  };
  refusals(0);
  // ca.pub itself, with its first line and surrounding whitespace, and upper-case hex.
  CredentialText file = good;
  file.ca_public_key = std::string(host::kCaPublicMagic) + "\n" + good.ca_public_key + "\n";
  std::transform(file.private_key.begin(), file.private_key.end(), file.private_key.begin(),
                 ::toupper);
  file.certificate = "  " + good.certificate + "\n";
  ASSERT_EQ(set(device, file), FEDSTAT_OK) << fedstat_client_last_error(device.client);
  EXPECT_EQ(has_credential(device), 1);
  refusals(1);
  EXPECT_EQ(fedstat_client_set_credential(device.client, nullptr, nullptr, nullptr, nullptr),
            FEDSTAT_OK);
  EXPECT_EQ(has_credential(device), 0);
  int has = 0;
  EXPECT_EQ(fedstat_client_has_credential(nullptr, &has), FEDSTAT_INVALID_ARGUMENT);
  EXPECT_EQ(fedstat_client_has_credential(device.client, nullptr), FEDSTAT_INVALID_ARGUMENT);
}

// The production flow: the device draws its own key (fedstat_credential_generate_key), the CA
// certifies the public key (fedstat-ca sign: credential::issue_certificate), and the Client takes
// the result; the same public key under another id is refused.
TEST_F(CabiSignedRound, AKeyTheDeviceDrewAndTheCaSignedIsTaken) {
  char private_key[FEDSTAT_CREDENTIAL_PRIVATE_KEY_HEX + 1];
  char public_key[FEDSTAT_CREDENTIAL_PUBLIC_KEY_HEX + 1];
  const char* message = nullptr;
  ASSERT_EQ(fedstat_credential_generate_key(blinding, private_key, public_key, &message),
            FEDSTAT_OK);
  EXPECT_EQ(std::string(private_key).size(), size_t{FEDSTAT_CREDENTIAL_PRIVATE_KEY_HEX});
  ASSERT_EQ(std::string(public_key).size(), size_t{FEDSTAT_CREDENTIAL_PUBLIC_KEY_HEX});
  EXPECT_EQ(std::string(public_key).substr(0, 2), "04");  // SEC1 uncompressed
  const std::vector<uint8_t> point = host::decode_hex(public_key).value_or(std::vector<uint8_t>());
  ASSERT_EQ(point.size(), credential::kPublicKeyBytes);
  credential::DeviceCredential issued;
  ASSERT_TRUE(credential::issue_certificate(ByteSpan(ca.private_key.data(), ca.private_key.size()),
                                            1, ByteSpan(point.data(), point.size()),
                                            issued.certificate)
                  .ok());
  memcpy(issued.ca_public_key, ca.public_key.data(), ca.public_key.size());
  CredentialText t = text_of(issued);
  t.private_key = private_key;
  CDevice device(1, 1 << 20);
  EXPECT_EQ(set(device, t), FEDSTAT_OK) << fedstat_client_last_error(device.client);
  EXPECT_EQ(has_credential(device), 1);

  EXPECT_EQ(fedstat_credential_generate_key(nullptr, private_key, public_key, &message),
            FEDSTAT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(message).find("random"), std::string::npos) << message;
  EXPECT_EQ(fedstat_credential_generate_key(blinding, nullptr, public_key, nullptr),
            FEDSTAT_INVALID_ARGUMENT);
  EXPECT_EQ(fedstat_credential_generate_key(blinding, private_key, nullptr, nullptr),
            FEDSTAT_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace client_test
}  // namespace fedstat
