# SPDX-License-Identifier: GPL-2.0-or-later
# What `cmake --install` puts where (GNUInstallDirs).  The Debian packages
# are built from these rules by debian/ (docs/packaging.md).
# keventd and keventctl install themselves (keventd/CMakeLists.txt).
#
#   <prefix>/sbin/keventd, <prefix>/bin/keventctl
#   <prefix>/lib/keventd/rules.d/*.yaml        the vendor layer (rules.d/)
#   /etc/keventd/rules.d/                      the admin's layer, empty
#   <includedir>/kevent/kevent.h               the UAPI header, for listeners
#   <mandir>/man{5,7,8,9}/                     the man pages
#   <unitdir>/keventd.service                  the systemd unit
#   <userunitdir>/keventd.service              the user unit (keventd --user)
#   <prefix>/lib/keventd/user-rules.d/*.yaml   the user instances' vendor layer (user-rules.d/)
#   /etc/keventd/user-rules.d/                 the admin's layer for users, empty
#   <datadir>/bash-completion/completions/keventctl
#   <datadir>/zsh/vendor-completions/_keventctl
#   <datadir>/fish/vendor_completions.d/keventctl.fish
#   <datadir>/dbus-1/interfaces/org.kernel.Event.xml
#   <datadir>/dbus-1/system.d/org.kernel.Event1.conf   only root owns the name
#   <datadir>/pkgconfig/keventd.pc             where rule packs install, the header

# systemd's unit directory: the distribution's for /usr (/lib/systemd/system
# on Debian 12), <prefix>/lib/systemd/system otherwise (systemd reads
# /usr/local/lib/systemd/system too).
if(NOT DEFINED KEVENT_SYSTEMD_UNITDIR)
  set(unitdir "${CMAKE_INSTALL_PREFIX}/lib/systemd/system")
  if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
    pkg_get_variable(sd_unitdir systemd systemdsystemunitdir)
    if(sd_unitdir)
      set(unitdir "${sd_unitdir}")
    else()
      set(unitdir "/lib/systemd/system")
    endif()
  endif()
  set(KEVENT_SYSTEMD_UNITDIR "${unitdir}")
endif()
# The user manager's: /usr/lib/systemd/user for /usr (systemd's
# systemduserunitdir), <prefix>/lib/systemd/user otherwise.
if(NOT DEFINED KEVENT_SYSTEMD_USERUNITDIR)
  set(userunitdir "${CMAKE_INSTALL_PREFIX}/lib/systemd/user")
  if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
    pkg_get_variable(sd_userunitdir systemd systemduserunitdir)
    if(sd_userunitdir)
      set(userunitdir "${sd_userunitdir}")
    endif()
  endif()
  set(KEVENT_SYSTEMD_USERUNITDIR "${userunitdir}")
endif()
set(KEVENT_CONF_DIR /etc/keventd) # fixed, whatever the prefix
set(KEVENT_ADMIN_RULES_DIR ${KEVENT_CONF_DIR}/rules.d)

# keventd.pc: for packagers of rule packs, as udev.pc is for udev rules:
#   pkg-config --variable=rulesdir keventd   the vendor rule directory
#   pkg-config --variable=confdir keventd    the admin's configuration
configure_file(${CMAKE_SOURCE_DIR}/packaging/keventd.pc.in ${CMAKE_BINARY_DIR}/keventd.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/keventd.pc DESTINATION ${CMAKE_INSTALL_DATADIR}/pkgconfig)

configure_file(${CMAKE_SOURCE_DIR}/keventd/keventd.service.in
               ${CMAKE_BINARY_DIR}/keventd.service @ONLY)
configure_file(${CMAKE_SOURCE_DIR}/keventd/keventd-user.service.in
               ${CMAKE_BINARY_DIR}/user/keventd.service @ONLY)

install(DIRECTORY ${CMAKE_SOURCE_DIR}/rules.d/
        DESTINATION ${KEVENT_VENDOR_RULES_SUBDIR}
        FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
        DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
                              GROUP_EXECUTE WORLD_READ WORLD_EXECUTE
        FILES_MATCHING PATTERN "*.yaml")
install(DIRECTORY DESTINATION ${KEVENT_ADMIN_RULES_DIR}
        DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
                              GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
# Not <includedir>/linux: that directory is the kernel's (linux-libc-dev).
install(FILES ${CMAKE_SOURCE_DIR}/kernel/include/uapi/linux/kevent.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kevent)
install(FILES ${CMAKE_BINARY_DIR}/keventd.service DESTINATION ${KEVENT_SYSTEMD_UNITDIR})
install(FILES ${CMAKE_BINARY_DIR}/user/keventd.service DESTINATION ${KEVENT_SYSTEMD_USERUNITDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/user-rules.d/
        DESTINATION ${KEVENT_VENDOR_USER_RULES_DIR}
        FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
        DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
                              GROUP_EXECUTE WORLD_READ WORLD_EXECUTE
        FILES_MATCHING PATTERN "*.yaml")
install(DIRECTORY DESTINATION ${KEVENT_CONF_DIR}/user-rules.d
        DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
                              GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
install(FILES ${CMAKE_SOURCE_DIR}/docs/org.kernel.Event.xml # keventd --dbus's interface
        DESTINATION ${CMAKE_INSTALL_DATADIR}/dbus-1/interfaces)
# The bus policy for keventd --dbus's name (the system bus reads
# /usr/share/dbus-1/system.d; with another prefix, link it into
# /etc/dbus-1/system.d).
install(FILES ${CMAKE_SOURCE_DIR}/keventd/org.kernel.Event1.conf
        DESTINATION ${CMAKE_INSTALL_DATADIR}/dbus-1/system.d)
install(FILES ${CMAKE_SOURCE_DIR}/keventd/keventctl.bash-completion
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME keventctl)
# zsh's: Debian's zsh reads vendor-completions (fpath); fish's: its
# vendor_completions.d.  Each offers the commands and sources the bash one
# does (the ops test completions).
install(FILES ${CMAKE_SOURCE_DIR}/keventd/keventctl.zsh-completion
        DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions
        RENAME _keventctl)
install(FILES ${CMAKE_SOURCE_DIR}/keventd/keventctl.fish-completion
        DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d
        RENAME keventctl.fish)

# A commented keventd.yaml with every section, to copy from (keventd.yaml(5),
# FILES).
install(FILES ${CMAKE_SOURCE_DIR}/docs/examples/keventd.yaml
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

set(KEVENT_MAN_PAGES keventd.8 keventctl.8 keventd.rules.5 keventd.yaml.5 keventd.sources.7
                     send_kevent.9)
foreach(page ${KEVENT_MAN_PAGES})
  string(REGEX REPLACE ".*\\.([0-9])$" "\\1" section ${page})
  install(FILES ${CMAKE_SOURCE_DIR}/docs/${page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section})
endforeach()
