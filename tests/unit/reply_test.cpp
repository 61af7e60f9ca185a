#include "sim/core/reply.h"

#include <gtest/gtest.h>

#include "sim/core/cmdline.h"

namespace redlab {
namespace {

TEST(Reply, FormatsNestedArraysLikeRedisCli) {
  Reply r = Reply::array({Reply::integer_reply(1),
                          Reply::array({Reply::integer_reply(2), Reply::bulk("a")}),
                          Reply::bulk(std::string("a\0b\n", 4))});
  EXPECT_EQ(format_cli(r), "1) (integer) 1\n2) 1) (integer) 2\n   2) \"a\"\n3) \"a\\x00b\\n\"\n");
}

TEST(Reply, WidensIndexColumnForTenOrMoreElements) {
  Reply r = Reply::array();
  for (int i = 0; i < 10; i++) r.elements.push_back(Reply::integer_reply(i));
  std::string s = format_cli(r);
  EXPECT_EQ(s.substr(0, 15), " 1) (integer) 0");
  EXPECT_NE(s.find("\n10) (integer) 9\n"), std::string::npos);
}

TEST(Reply, EmptyAndNil) {
  EXPECT_EQ(format_cli(Reply::array()), "(empty array)\n");
  EXPECT_EQ(format_cli(Reply::nil()), "(nil)\n");
  EXPECT_EQ(format_cli(Reply::nil_array()), "(nil)\n");
  EXPECT_EQ(format_cli(Reply::error("ERR x")), "(error) ERR x\n");
}

TEST(Reply, RespEncoding) {
  EXPECT_EQ(to_resp(Reply::array({Reply::bulk("foo"), Reply::nil(), Reply::nil_array()})),
            "*3\r\n$3\r\nfoo\r\n$-1\r\n*-1\r\n");
}

TEST(SplitArgs, QuotingRules) {
  auto a = split_args(R"(set "a b" 'c\'d' "\x41\n" x"y")");
  ASSERT_TRUE(a);
  EXPECT_EQ(*a, (std::vector<std::string>{"set", "a b", "c'd", "A\n", "xy"}));
  EXPECT_FALSE(split_args("\"abc"));
  EXPECT_FALSE(split_args("\"abc\"x"));
  EXPECT_FALSE(split_args("'abc"));
  EXPECT_TRUE(split_args("   ")->empty());
}

}  // namespace
}  // namespace redlab
