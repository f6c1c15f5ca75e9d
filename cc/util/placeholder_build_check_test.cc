// TEMPORARY placeholder to prove the build system before the real tests land. Delete me.
#include <turbojpeg.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

TEST(PlaceholderBuildCheck, LinksEverything) {
  tjhandle h = tjInitDecompress();
  ASSERT_NE(h, nullptr);
  tjDestroy(h);
  auto j = nlohmann::json::parse(R"({"a": [1, 2]})");
  EXPECT_THAT(j["a"].get<std::vector<int>>(), ::testing::ElementsAre(1, 2));
}
