// The collector's exchange (tagg_client.h) against a TAgg behind the real TLS listener: a known
// collector gets the noised result; an unknown identity or a wrong key is refused at the
// handshake (not retried); nothing listening is unreachable (retried).
#include <gtest/gtest.h>

#include <asio.hpp>
#include <thread>

#include "host_server/net/tls_server.h"
#include "host_server/net_bridge.h"
#include "host_server/store/memory_store.h"
#include "host_server/tagg/tagg_client.h"
#include "host_server/tagg/tagg_intake.h"
#include "tests/tagg/tagg_fixture.h"

namespace fedstat {
namespace host {
namespace testing {
namespace {

std::array<uint8_t, 32> key(uint8_t byte) {
  std::array<uint8_t, 32> k;
  k.fill(byte);
  return k;
}

class TaggTls : public ::testing::Test {
 protected:
  TaggTls()
      : store_(make_memory_store()),
        plan_(plan_task(kl_declaration(kTaggTask, "tagg"), "", 0)),
        service_(*store_, plans(), {}),
        intake_(service_, bridge_, {{kTaggTask, "collector-1"}}, nullptr) {
    net::TlsServerConfig config;
    config.lookup_psk = [](const std::string& identity) -> std::optional<std::array<uint8_t, 32>> {
      if (identity == "collector-1") return key(0x3c);
      return std::nullopt;
    };
    server_ = std::make_unique<net::TlsServer>(io_, config, bridge_);
    bridge_.attach(server_.get(), &intake_, nullptr);
    server_->start();
    io_thread_ = std::thread([this] { io_.run(); });
  }
  ~TaggTls() override {
    asio::post(io_, [this] { server_->stop(); });
    io_thread_.join();
  }
  std::map<uint32_t, TaskPlan> plans() {
    std::map<uint32_t, TaskPlan> out;
    out.emplace(kTaggTask, plan_task(kl_declaration(kTaggTask, "tagg"), "", 0));
    return out;
  }
  TaggEndpoint endpoint(const std::string& identity, uint8_t key_byte) const {
    TaggEndpoint e;
    e.endpoint = "127.0.0.1:" + std::to_string(server_->port());
    e.identity = identity;
    e.psk = key(key_byte);
    e.timeout_ms = 5000;
    return e;
  }

  std::unique_ptr<Store> store_;
  TaskPlan plan_;
  TaggService service_;
  NetBridge<TaggIntake> bridge_;
  TaggIntake intake_;
  asio::io_context io_;
  std::unique_ptr<net::TlsServer> server_;
  std::thread io_thread_;
};

TEST_F(TaggTls, AKnownCollectorGetsTheNoisedResultOthersAreRefused) {
  const ExactAggregate aggregate = fleet_aggregate(plan_, 6);
  TaggAnswer unknown = exchange_with_tagg(endpoint("collector-2", 0x3c), aggregate);
  EXPECT_EQ(unknown.kind, TaggAnswer::Kind::kRefused) << unknown.detail;
  TaggAnswer wrong_key = exchange_with_tagg(endpoint("collector-1", 0x3d), aggregate);
  EXPECT_EQ(wrong_key.kind, TaggAnswer::Kind::kRefused) << wrong_key.detail;
  EXPECT_TRUE(store_->events(kTaggTask).empty());

  // Refused at the first of several chunks: the collector still reads the TAgg's reason.
  ExactAggregate long_one = aggregate;
  long_one.words.resize(aggregate.words.size() + 200, 1);
  TaggAnswer too_long = exchange_with_tagg(endpoint("collector-1", 0x3c), long_one);
  EXPECT_EQ(too_long.kind, TaggAnswer::Kind::kRefused) << too_long.detail;
  EXPECT_NE(too_long.detail.find("words, not"), std::string::npos) << too_long.detail;
  EXPECT_TRUE(store_->events(kTaggTask).empty());

  TaggAnswer released = exchange_with_tagg(endpoint("collector-1", 0x3c), aggregate);
  ASSERT_EQ(released.kind, TaggAnswer::Kind::kReleased) << released.detail;
  EXPECT_EQ(released.result_json, store_->result(kTaggTask));
  ExactAggregate other = aggregate;
  other.words[0] += 1;
  TaggAnswer second = exchange_with_tagg(endpoint("collector-1", 0x3c), other);
  EXPECT_EQ(second.kind, TaggAnswer::Kind::kRefused);
  EXPECT_NE(second.detail.find("already has another aggregate"), std::string::npos)
      << second.detail;
}

TEST(TaggClient, NothingListeningIsUnreachable) {
  asio::io_context io;
  asio::ip::tcp::acceptor probe(io, {asio::ip::make_address("127.0.0.1"), 0});
  const uint16_t port = probe.local_endpoint().port();
  probe.close();  // the port is free again: nothing listens there
  TaggEndpoint e;
  e.endpoint = "127.0.0.1:" + std::to_string(port);
  e.identity = "collector-1";
  e.timeout_ms = 2000;
  const TaggAnswer answer = exchange_with_tagg(e, ExactAggregate{7, 6, {1}});
  EXPECT_EQ(answer.kind, TaggAnswer::Kind::kUnreachable) << answer.detail;
}

}  // namespace
}  // namespace testing
}  // namespace host
}  // namespace fedstat
