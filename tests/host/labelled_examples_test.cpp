// Labelled examples (host_server/estimate/labelled_examples.h) and their split across emulated
// devices (client_emulation.h split_examples).
#include "host_server/estimate/labelled_examples.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "host_server/estimate/client_emulation.h"

namespace fedstat {
namespace host {
namespace {

std::string write(const std::string& name, const std::string& text) {
  // Per process: ctest runs tests in parallel processes that write the same names.
  const std::string path = ::testing::TempDir() + std::to_string(getpid()) + "_" + name;
  std::ofstream(path) << text;
  return path;
}

std::string error_of(const std::string& path, size_t dimension) {
  try {
    read_labelled_examples(path, dimension);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "accepted";
}

TEST(LabelledExamples, ReadsLabelsAndFeaturesAsWritten) {
  const std::string path = write("examples_ok.csv", "1,0.5,-0.5\n\n0,0.25,0\n-1, 0 ,1\n");
  const LabelledExamples e = read_labelled_examples(path, 2);
  ASSERT_EQ(e.count(), 3u);                               // the blank line is skipped
  EXPECT_EQ(e.labels, (std::vector<int8_t>{1, -1, -1}));  // 0 is read as −1
  EXPECT_EQ(e.features, (std::vector<float>{0.5f, -0.5f, 0.25f, 0.f, 0.f, 1.f}));
  const tasks::Examples view = e.view(1, 2);
  EXPECT_EQ(view.count(), 2u);
  EXPECT_EQ(view.dimension, 2u);
  EXPECT_EQ(view.features[0], 0.25f);
  EXPECT_THROW(e.view(2, 2), std::out_of_range);
}

TEST(LabelledExamples, RefusesMalformedRowsNamingFileLineAndField) {
  EXPECT_NE(error_of(write("ex_comma.csv", "1,0.5,0.5\n1,0.5,\n"), 2)
                .find("ex_comma.csv:2: field 3: is empty"),
            std::string::npos);
  EXPECT_NE(error_of(write("ex_width.csv", "1,0.5\n"), 2)
                .find("ex_width.csv:1: 2 fields; a label and 2 features expected"),
            std::string::npos);
  EXPECT_NE(error_of(write("ex_label.csv", "1,0.5,0\n2,0.5,0\n"), 2)
                .find("ex_label.csv:2: field 1: the label must be -1, 0 or 1"),
            std::string::npos);
  EXPECT_NE(error_of(write("ex_norm.csv", "1,0.8,0.7\n"), 2)
                .find("ex_norm.csv:1: the features' L2 norm is above 1"),
            std::string::npos);
  EXPECT_NE(error_of(write("ex_huge.csv", "1,1e39,0\n"), 2).find("ex_huge.csv:1: the features'"),
            std::string::npos);  // beyond float: not an infinite feature
  EXPECT_NE(error_of(write("ex_empty.csv", "\n"), 2).find("no examples"), std::string::npos);
  EXPECT_NE(error_of(::testing::TempDir() + "ex_absent.csv", 2).find("cannot open"),
            std::string::npos);
}

TEST(LabelledExamples, SplitGivesEachClientItsOwnBlockOfRows) {
  std::string text;
  for (int i = 0; i < 7; ++i) text += (i % 2 ? "1," : "-1,") + std::to_string(i / 10.0) + "\n";
  const LabelledExamples all = read_labelled_examples(write("ex_split.csv", text), 1);
  const EmulatedClients clients = split_examples(all, 3, 2);
  ASSERT_EQ(clients.size(), 3u);
  for (size_t c = 0; c < 3; ++c) {
    EXPECT_TRUE(clients[c]->table.empty());  // no histogram
    ASSERT_EQ(clients[c]->examples.count(), 2u);
    EXPECT_EQ(clients[c]->examples.features,
              (std::vector<float>{all.features[2 * c], all.features[2 * c + 1]}));
    EXPECT_EQ(clients[c]->examples.labels[0], all.labels[2 * c]);
  }
  EXPECT_THROW(split_examples(all, 4, 2), std::invalid_argument);  // 7 rows < 4 × 2
}

}  // namespace
}  // namespace host
}  // namespace fedstat
