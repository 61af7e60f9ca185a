// The keys every fault may carry besides do, at_ms, when and why, as the kinds that use them
// declare them (a kind lists the ones it uses, required or not).
#pragma once

#include "sim/scenario/kinds.h"

namespace redlab::scenario::faults {

inline constexpr FieldSpec kActor{
    .key = "actor", .type = FieldType::Actor, .required = true, .missing_hint = "who the % hits"};
inline constexpr FieldSpec kServer{
    .key = "server", .type = FieldType::Server, .absent = "the first server"};
inline constexpr FieldSpec kFor{.key = "for_ms",
                                .type = FieldType::Duration,
                                .required = true,
                                .unit = "ms",
                                .missing_hint = "how long the % lasts"};
inline constexpr FieldSpec kBy{
    .key = "by_ms", .type = FieldType::SignedDuration, .required = true, .unit = "ms"};

// The keys every kind accepts (and ignores where it does not use them), in this order.
inline constexpr const char* kSharedKeys[] = {"actor", "server", "for_ms", "by_ms"};

}  // namespace redlab::scenario::faults
