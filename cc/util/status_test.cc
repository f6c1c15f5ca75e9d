#include "cc/util/status.h"

#include <gtest/gtest.h>

namespace tfg {
namespace {

Status FailsWith(Status s) {
  TFG_RETURN_IF_ERROR(s);
  return InternalError("not reached");
}

TEST(StatusTest, OkByDefault) {
  EXPECT_TRUE(Status().ok());
  EXPECT_EQ(Status::Ok().code(), StatusCode::kOk);
}

TEST(StatusTest, ErrorsConcatenateTheirMessage) {
  Status s = DataLossError("file ", "x", " offset ", 42);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_EQ(s.message(), "file x offset 42");
}

TEST(StatusTest, ReturnIfErrorPropagates) {
  EXPECT_EQ(FailsWith(NotFoundError("gone")).code(), StatusCode::kNotFound);
  EXPECT_EQ(FailsWith(Status::Ok()).code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace tfg
