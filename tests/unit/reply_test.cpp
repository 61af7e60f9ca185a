#include "sim/core/reply.h"

#include <gtest/gtest.h>

#include <functional>

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

// resp_size is to_resp(...).size() without the string; format_short stops formatting at its
// limit and must print what formatting everything and cutting would.
TEST(Reply, RespSizeAndShortFormOfBigReplies) {
  std::vector<Reply> replies = {
      Reply::ok(),
      Reply::error("ERR x"),
      Reply::integer_reply(-12345),
      Reply::nil(),
      Reply::nil_array(),
      Reply::bulk(std::string(70000, 'x')),
      Reply::array({Reply::bulk("message"), Reply::bulk("orders"),
                    Reply::bulk("order-1 " + std::string(65528, '.'))}),
      Reply::array({Reply::array({Reply::integer_reply(1), Reply::bulk("a\n")}), Reply::array()}),
  };
  auto full_short = [](const Reply& r, size_t max_chars) {
    // The old way: the whole reply formatted, then cut.
    std::string out;
    std::function<void(const Reply&)> into = [&](const Reply& x) {
      switch (x.kind) {
        case Reply::Kind::Bulk:
          out += quote_repr(x.str);
          return;
        case Reply::Kind::Array:
          out += '[';
          for (size_t k = 0; k < x.elements.size(); k++) {
            if (k) out += ' ';
            into(x.elements[k]);
          }
          out += ']';
          return;
        default:
          out += format_short(x, 1000);
      }
    };
    into(r);
    if (out.size() > max_chars) out = out.substr(0, max_chars > 3 ? max_chars - 3 : 0) + "...";
    return out;
  };
  for (const Reply& r : replies) {
    EXPECT_EQ(resp_size(r), to_resp(r).size()) << format_short(r);
    for (size_t max_chars : {0, 3, 5, 18, 19, 20, 60, 120})
      EXPECT_EQ(format_short(r, max_chars), full_short(r, max_chars)) << max_chars;
  }
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
