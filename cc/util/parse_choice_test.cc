#include "cc/util/parse_choice.h"

#include <gtest/gtest.h>

namespace tfg {
namespace {

enum class Fruit { kApple, kPear, kPlum };

const std::vector<std::pair<const char*, Fruit>> kFruits = {
    {"apple", Fruit::kApple}, {"pear", Fruit::kPear}, {"plum", Fruit::kPlum}};

TEST(ParseChoiceTest, EachNameGivesItsValue) {
  Fruit f = Fruit::kApple;
  ASSERT_TRUE(ParseChoice("fruit", "plum", kFruits, &f).ok());
  EXPECT_EQ(f, Fruit::kPlum);
  ASSERT_TRUE(ParseChoice("fruit", "pear", kFruits, &f).ok());
  EXPECT_EQ(f, Fruit::kPear);
}

TEST(ParseChoiceTest, AnyOtherNameIsRefusedListingTheChoices) {
  Fruit f = Fruit::kPear;
  const Status s = ParseChoice("fruit", "Plum", kFruits, &f);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "fruit must be 'apple', 'pear' or 'plum', got 'Plum'");
  EXPECT_EQ(f, Fruit::kPear) << "left as it was";
  const std::vector<std::pair<const char*, Fruit>> two = {{"a", Fruit::kApple},
                                                         {"b", Fruit::kPear}};
  EXPECT_EQ(ParseChoice("x", "", two, &f).message(), "x must be 'a' or 'b', got ''");
}

}  // namespace
}  // namespace tfg
