// The server config's ca_public_key (issue 42): fedstat-ca's ca.pub read at start, a CA private
// key file refused (the server must never hold it), and every declared DIST task — and no other —
// planned as a signed session (TaskSpec::secagg_ca_public_key). Paper: none.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "host_server/credential/fleet_credentials.h"
#include "host_server/server_app.h"
#include "host_server/server_config.h"
#include "nlohmann/json.hpp"
#include "tests/rounds/fake_store.h"
#include "tests/rounds/round_messages.h"
#include "tests/store/temp_dir.h"

namespace fedstat {
namespace host {
namespace testing {
namespace {

using nlohmann::json;

const std::string kSecret(64, 'a');

json kl_task(uint32_t id, const char* trust) {
  json task{{"id", id},
            {"kind", "kl"},
            {"trust", trust},
            {"epsilon", 1.0},
            {"delta", 1e-6},
            {"min_clients", 8},
            {"max_clients", 10},
            {"deadline_seconds", 600},
            {"seed", std::string(62, '0') + "31"},
            {"kl", {{"reference", "reference.txt"}, {"rounds", 30}, {"lambda", 0.1}}}};
  if (std::string(trust) == "dist") task["threshold"] = 8;
  return task;
}

class SignedConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    uint64_t seed = 3;
    ca = make_ca_key(&seed);
    write_ca_key(dir.file("ca.key"), ca, false);
    write_ca_public_key(dir.file("ca.pub"), ca.public_key, false);
    std::ofstream reference(dir.file("reference.txt"));
    for (int i = 0; i < 20; ++i) reference << i << " " << 100 / (i + 1) << "\n";
  }

  ServerConfig read(const json& config) {
    const std::string path = dir.file("server.json");
    std::ofstream(path) << config.dump();
    return read_server_config(path);
  }

  // The std::invalid_argument read_server_config throws for `config` ("" if none).
  std::string refusal(const json& config) {
    try {
      read(config);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  }

  fedstat::testing::TempDir dir;
  CaKey ca;
};

TEST_F(SignedConfig, TheCaPublicKeySignsEveryDistTaskAndNoOther) {
  const json config{{"fleet_secret", kSecret},
                    {"ca_public_key", "ca.pub"},  // relative to the config file
                    {"tasks", {kl_task(1, "dist"), kl_task(2, "trusted")}}};
  const ServerConfig c = read(config);
  ASSERT_TRUE(c.ca_public_key.has_value());
  EXPECT_EQ(*c.ca_public_key, ca.public_key);
  FakeStore store;
  const std::vector<TaskSpec> specs = plan_declared_tasks(c, store, kT0);
  ASSERT_EQ(specs.size(), 2u);
  ASSERT_TRUE(specs[0].secagg_ca_public_key.has_value());
  EXPECT_EQ(*specs[0].secagg_ca_public_key, ca.public_key);
  EXPECT_FALSE(specs[1].secagg_ca_public_key.has_value()) << "a trusted task is not signed";

  // Without the field, DIST runs unsigned (the default).
  const ServerConfig plain = read({{"fleet_secret", kSecret}, {"tasks", {kl_task(1, "dist")}}});
  EXPECT_FALSE(plain.ca_public_key.has_value());
  EXPECT_FALSE(plan_declared_tasks(plain, store, kT0)[0].secagg_ca_public_key.has_value());
}

TEST_F(SignedConfig, TheCaPrivateKeyAMissingFileAndATaggAreRefused) {
  const std::string key = refusal({{"fleet_secret", kSecret}, {"ca_public_key", "ca.key"}});
  EXPECT_NE(key.find("private key"), std::string::npos) << key;
  EXPECT_NE(key.find("ca.pub"), std::string::npos) << key;
  const std::string missing = refusal({{"fleet_secret", kSecret}, {"ca_public_key", "none.pub"}});
  EXPECT_NE(missing.find("ca_public_key"), std::string::npos) << missing;
  std::ofstream(dir.file("bad.pub"))
      << "fedstat-ca public key v1\n04" << std::string(128, '1') << "\n";
  const std::string off_curve = refusal({{"fleet_secret", kSecret}, {"ca_public_key", "bad.pub"}});
  EXPECT_NE(off_curve.find("ca_public_key"), std::string::npos) << off_curve;
  const std::string tagg =
      refusal({{"role", "tagg"}, {"collectors", {{"c1", kSecret}}}, {"ca_public_key", "ca.pub"}});
  EXPECT_NE(tagg.find("ca_public_key"), std::string::npos) << tagg;
}

// A signed complete graph needs 2t > n + ceil(5% n) (the devices' collusion rule,
// SecAggClient::on_start): the server refuses to plan a lower threshold rather than run a round
// every credentialed device would refuse. n = 40: t = 21 (42 <= 42) refused, 22 planned; the same
// 21 unsigned is planned (2t > n only).
TEST_F(SignedConfig, ASignedCompleteGraphThresholdCoversColluders) {
  json task = kl_task(1, "dist");
  task["min_clients"] = 40;
  task["max_clients"] = 40;
  task["threshold"] = 21;
  FakeStore store;
  const ServerConfig low =
      read({{"fleet_secret", kSecret}, {"ca_public_key", "ca.pub"}, {"tasks", {task}}});
  try {
    plan_declared_tasks(low, store, kT0);
    ADD_FAILURE() << "a signed threshold of 21 of 40 was planned";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("too low for a signed session"), std::string::npos)
        << e.what();
  }
  const ServerConfig unsigned_low = read({{"fleet_secret", kSecret}, {"tasks", {task}}});
  EXPECT_EQ(plan_declared_tasks(unsigned_low, store, kT0).size(), 1u);
  task["threshold"] = 22;
  const ServerConfig enough =
      read({{"fleet_secret", kSecret}, {"ca_public_key", "ca.pub"}, {"tasks", {task}}});
  EXPECT_EQ(plan_declared_tasks(enough, store, kT0).size(), 1u);
}

// Mutual TLS (issue 42 item 1): tls_certificate, tls_private_key, tls_client_ca all three or
// none; device_authentication defaults to "either" with them and "psk" without; "certificate"
// needs no device secret; the CA's key file is refused as the server's TLS key.
TEST_F(SignedConfig, TlsCertificatesAndDeviceAuthentication) {
  std::ofstream(dir.file("server.crt")) << "-----BEGIN CERTIFICATE-----\n";
  std::ofstream(dir.file("server.key")) << "-----BEGIN EC PRIVATE KEY-----\n";
  std::ofstream(dir.file("ca.crt")) << "-----BEGIN CERTIFICATE-----\n";
  const json tls{{"tls_certificate", "server.crt"},
                 {"tls_private_key", "server.key"},
                 {"tls_client_ca", "ca.crt"}};
  json config{{"fleet_secret", kSecret}};
  EXPECT_EQ(read(config).device_authentication, "psk");
  config.update(tls);
  const ServerConfig either = read(config);
  EXPECT_EQ(either.device_authentication, "either");
  EXPECT_EQ(either.tls_certificate_pem, "-----BEGIN CERTIFICATE-----\n");
  EXPECT_EQ(either.tls_private_key_path, dir.file("server.key"));
  config["device_authentication"] = "psk";
  EXPECT_EQ(read(config).device_authentication, "psk");
  config["device_authentication"] = "mtls";
  EXPECT_NE(refusal(config).find("device_authentication must be"), std::string::npos);
  json certificate_only = tls;
  certificate_only["device_authentication"] = "certificate";  // no fleet_secret, no credentials
  EXPECT_EQ(read(certificate_only).device_authentication, "certificate");
  json two = {
      {"fleet_secret", kSecret}, {"tls_certificate", "server.crt"}, {"tls_client_ca", "ca.crt"}};
  EXPECT_NE(refusal(two).find("all three of tls_certificate"), std::string::npos);
  json needs = {{"fleet_secret", kSecret}, {"device_authentication", "either"}};
  EXPECT_NE(refusal(needs).find("needs tls_certificate"), std::string::npos);
  json psk_without_secret = tls;
  psk_without_secret["device_authentication"] = "either";
  EXPECT_NE(refusal(psk_without_secret).find("exactly one of credentials and fleet_secret"),
            std::string::npos);
  json ca_key = config;
  ca_key["device_authentication"] = "either";
  ca_key["tls_private_key"] = "ca.key";
  EXPECT_NE(refusal(ca_key).find("is the CA's private key"), std::string::npos);
  // tls_revoked_devices: a path resolved against the config's directory, with certificates only.
  json revoked = certificate_only;
  revoked["tls_revoked_devices"] = "revoked.txt";
  EXPECT_EQ(read(revoked).tls_revoked_devices_path, dir.file("revoked.txt"));
  json revoked_without_certificates = {{"fleet_secret", kSecret},
                                       {"tls_revoked_devices", "revoked.txt"}};
  EXPECT_NE(refusal(revoked_without_certificates).find("tls_revoked_devices lists revoked device"),
            std::string::npos);
}

// A signed sparse graph: the server plans (k, t) that also meet the devices' rule 2t > k +
// ceil(5% max_clients) (the server picks U1 knowing the ring,
// secagg::signed_sparse_threshold_holds) — at 1,000 devices (98, 75) where an unsigned server plans
// (62, 43) —, refuses a declared threshold below it, and a max_clients no degree <= 126 fits, at
// config load.
TEST_F(SignedConfig, ASignedSparseGraphMeetsTheDevicesRule) {
  json task = kl_task(1, "dist");
  task.erase("threshold");
  task["min_clients"] = 500;
  task["max_clients"] = 1000;
  FakeStore store;
  auto plan = [&](const json& t, bool with_ca) {
    json config{{"fleet_secret", kSecret}, {"tasks", {t}}};
    if (with_ca) config["ca_public_key"] = "ca.pub";
    return plan_declared_tasks(read(config), store, kT0).at(0).task;
  };
  auto refusal_of = [&](const json& t) {
    try {
      plan(t, true);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("planned");
  };
  const fedstat_v1_Task signed_task = plan(task, true);
  EXPECT_EQ(signed_task.secagg_degree, 98u);
  EXPECT_EQ(signed_task.threshold, 75u);
  const fedstat_v1_Task unsigned_task = plan(task, false);
  EXPECT_EQ(unsigned_task.secagg_degree, 62u);
  EXPECT_EQ(unsigned_task.threshold, 43u);
  task["threshold"] = 74;
  EXPECT_NE(refusal_of(task).find("too low for a signed sparse session"), std::string::npos)
      << refusal_of(task);
  task.erase("threshold");
  task["min_clients"] = 1000;
  task["max_clients"] = 2000;
  EXPECT_NE(refusal_of(task).find("no signed sparse graph fits max_clients 2000"),
            std::string::npos)
      << refusal_of(task);
}

}  // namespace
}  // namespace testing
}  // namespace host
}  // namespace fedstat
