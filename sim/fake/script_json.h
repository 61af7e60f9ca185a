// The cjson library of Redis' Lua scripts (lua-cjson 2.1.0 as bundled with Redis 7.0).
#pragma once

struct lua_State;

namespace redlab::fake {

// Pushes the cjson table (encode, decode, null, the configuration getters, _NAME, _VERSION).
void push_cjson_library(lua_State* L);

}  // namespace redlab::fake
