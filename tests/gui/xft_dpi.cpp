// Xft.dpi on the X server's root window, as xrdb would put it (gui_dpi_test.cpp). Apart from
// the tests: Xlib's macros (None, Bool, Status) clash with GoogleTest's names.
#include <X11/Xatom.h>
#include <X11/Xlib.h>

#include <string>

namespace redlab::gui::test {

bool set_xft_dpi(int dpi) {
  Display* display = XOpenDisplay(nullptr);
  if (!display) return false;
  const std::string resources = "Xft.dpi:\t" + std::to_string(dpi) + "\n";
  XChangeProperty(display, DefaultRootWindow(display),
                  XInternAtom(display, "RESOURCE_MANAGER", False), XA_STRING, 8, PropModeReplace,
                  reinterpret_cast<const unsigned char*>(resources.data()),
                  static_cast<int>(resources.size()));
  XCloseDisplay(display);
  return true;
}

}  // namespace redlab::gui::test
