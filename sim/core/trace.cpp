// See trace.h. Writing goes through nlohmann::ordered_json one event at a time so that the
// field order is the order below (time first, for a reader), and the layout (one event per
// line) is ours; reading validates every field and reports where the input is wrong.
#include "sim/core/trace.h"

#include <nlohmann/json.hpp>

namespace redlab {
namespace {

using OrderedJson = nlohmann::ordered_json;
using Json = nlohmann::json;

std::string dump(const OrderedJson& j) {
  // replace: invalid UTF-8 becomes U+FFFD instead of throwing.
  return j.dump(-1, ' ', false, nlohmann::detail::error_handler_t::replace);
}

OrderedJson event_json(const TraceEvent& e) {
  OrderedJson j;
  j["time_us"] = e.time_us;
  j["kind"] = e.kind;
  j["actor"] = e.actor;
  j["connection"] = e.connection;
  j["step"] = e.step;
  j["attempt"] = e.attempt;
  j["text"] = e.text;
  return j;
}

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

bool read_int(const Json& j, const std::string& where, int64_t& out, std::string* error) {
  if (!j.is_number_integer()) return fail(error, where + ": expected an integer");
  if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    return fail(error, where + ": integer out of range");
  out = j.get<int64_t>();
  return true;
}

bool read_string(const Json& j, const std::string& where, std::string& out, std::string* error) {
  if (!j.is_string()) return fail(error, where + ": expected a string");
  out = j.get<std::string>();
  return true;
}

bool read_event(const Json& j, const std::string& where, TraceEvent& e, std::string* error) {
  if (!j.is_object()) return fail(error, where + ": expected an object");
  if (!j.contains("time_us")) return fail(error, where + ": missing field 'time_us'");
  if (!j.contains("kind")) return fail(error, where + ": missing field 'kind'");
  for (const auto& [key, value] : j.items()) {
    std::string at = where + "." + key;
    bool ok = true;
    if (key == "time_us") {
      ok = read_int(value, at, e.time_us, error);
    } else if (key == "kind") {
      ok = read_string(value, at, e.kind, error);
    } else if (key == "actor") {
      ok = read_string(value, at, e.actor, error);
    } else if (key == "connection") {
      ok = read_int(value, at, e.connection, error);
    } else if (key == "step") {
      ok = read_int(value, at, e.step, error);
    } else if (key == "attempt") {
      ok = read_int(value, at, e.attempt, error);
    } else if (key == "text") {
      ok = read_string(value, at, e.text, error);
    } else {
      ok = fail(error, where + ": unknown field '" + key + "'");
    }
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string trace_to_json(const Trace& trace) {
  OrderedJson meta = OrderedJson::object();
  for (const auto& [key, value] : trace.meta()) meta[key] = value;  // std::map: sorted keys
  std::string out;
  out += "{\"format\":" + dump(OrderedJson(kTraceFormat)) +
         ",\"version\":" + std::to_string(kTraceVersion) + ",\n";
  out += "\"meta\":" + dump(meta) + ",\n";
  out += "\"events\":[";
  bool first = true;
  for (const TraceEvent& e : trace.events()) {
    out += first ? "\n" : ",\n";
    first = false;
    out += dump(event_json(e));
  }
  out += "\n]}\n";
  return out;
}

std::optional<Trace> trace_from_json(std::string_view text, std::string* error) {
  Json root;
  try {
    root = Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    // e.what() says "[json.exception.parse_error.101] parse error at line 2, column 5: ...".
    fail(error, std::string("trace: ") + e.what());
    return std::nullopt;
  }
  if (!root.is_object()) {
    fail(error, "trace: expected a JSON object");
    return std::nullopt;
  }
  auto format = root.find("format");
  if (format == root.end() || !format->is_string() || *format != kTraceFormat) {
    fail(error, "format: expected \"" + std::string(kTraceFormat) + "\"");
    return std::nullopt;
  }
  auto version = root.find("version");
  int64_t v = 0;
  if (version == root.end()) {
    fail(error, "version: missing");
    return std::nullopt;
  }
  if (!read_int(*version, "version", v, error)) return std::nullopt;
  if (v != kTraceVersion) {
    fail(error, "version: " + std::to_string(v) + " is not supported (this build reads " +
                    std::to_string(kTraceVersion) + ")");
    return std::nullopt;
  }
  Trace trace;
  for (const auto& [key, value] : root.items()) {
    if (key == "format" || key == "version") continue;
    if (key == "meta") {
      if (!value.is_object()) {
        fail(error, "meta: expected an object");
        return std::nullopt;
      }
      for (const auto& [mkey, mvalue] : value.items()) {
        std::string s;
        if (!read_string(mvalue, "meta." + mkey, s, error)) return std::nullopt;
        trace.set_meta(mkey, std::move(s));
      }
    } else if (key == "events") {
      if (!value.is_array()) {
        fail(error, "events: expected an array");
        return std::nullopt;
      }
      for (size_t i = 0; i < value.size(); i++) {
        TraceEvent e;
        if (!read_event(value[i], "events[" + std::to_string(i) + "]", e, error))
          return std::nullopt;
        trace.append(std::move(e));
      }
    } else {
      fail(error, "trace: unknown field '" + key + "'");
      return std::nullopt;
    }
  }
  return trace;
}

}  // namespace redlab
