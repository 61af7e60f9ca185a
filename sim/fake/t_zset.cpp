// zset commands: not implemented yet.
#include "sim/fake/server.h"

namespace redlab::fake {

void register_zset_commands(CommandTable& table) { (void)table; }

}  // namespace redlab::fake
