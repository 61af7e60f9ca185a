// scripting commands: not implemented yet.
#include "sim/fake/server.h"

namespace redlab::fake {

void register_scripting_commands(CommandTable& table) { (void)table; }

}  // namespace redlab::fake
