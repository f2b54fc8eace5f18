# SPDX-License-Identifier: Apache-2.0
# qiblad: build and install.
#
#   make                          swift build -c release
#   make check                    the whole test suite (the daemon, then the app)
#   sudo make install             into PREFIX (default /usr/local); packagers: make install PREFIX=/usr DESTDIR=…
#   make install-user             into ~/.local and ~/.config/systemd/user, no root (the user service only)
#   make uninstall / uninstall-user
#   make app                      Qibla Compass, the GTK app (clients/qibla-compass): swift build -c release
#   sudo make install-app         the app, its desktop entry, metainfo, icons, translations; make uninstall-app
#
# Every directory is a variable, so a distribution can move any of them (e.g. Debian's zsh
# completions: ZSHCOMPDIR=/usr/share/zsh/vendor-completions). Files that only /usr or /etc are
# searched for (the system-bus policy, udev rules, sysusers) go under /usr when PREFIX=/usr and
# under /etc otherwise, since D-Bus, udev and systemd-sysusers do not look in /usr/local.

PREFIX      ?= /usr/local
DESTDIR     ?=
BUILDDIR    ?= .build/release
SWIFT       ?= swift

BINDIR      ?= $(PREFIX)/bin
DATADIR     ?= $(PREFIX)/share
MANDIR      ?= $(DATADIR)/man
LOCALEDIR   ?= $(DATADIR)/locale
DOCDIR      ?= $(DATADIR)/doc/qiblad
ifeq ($(PREFIX),/usr)
SYSCONFDIR  ?= /etc
LIBDIR_SYSTEMD ?= /usr/lib
DBUSPOLICYDIR  ?= $(DATADIR)/dbus-1/system.d
POLKITRULESDIR ?= $(DATADIR)/polkit-1/rules.d
UDEVRULESDIR   ?= /usr/lib/udev/rules.d
SYSUSERSDIR    ?= /usr/lib/sysusers.d
else
SYSCONFDIR  ?= /etc
LIBDIR_SYSTEMD ?= $(PREFIX)/lib
DBUSPOLICYDIR  ?= $(SYSCONFDIR)/dbus-1/system.d
POLKITRULESDIR ?= $(SYSCONFDIR)/polkit-1/rules.d
UDEVRULESDIR   ?= $(SYSCONFDIR)/udev/rules.d
SYSUSERSDIR    ?= $(SYSCONFDIR)/sysusers.d
endif
SYSTEMDUSERUNITDIR   ?= $(LIBDIR_SYSTEMD)/systemd/user
SYSTEMDSYSTEMUNITDIR ?= $(LIBDIR_SYSTEMD)/systemd/system
DBUSSERVICEDIR       ?= $(DATADIR)/dbus-1/services
DBUSSYSTEMSERVICEDIR ?= $(DATADIR)/dbus-1/system-services
DBUSINTERFACEDIR     ?= $(DATADIR)/dbus-1/interfaces
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
ZSHCOMPDIR  ?= $(DATADIR)/zsh/site-functions
FISHCOMPDIR ?= $(DATADIR)/fish/vendor_completions.d

# The user mode: everything in the home directory, where the user's systemd, D-Bus, man and shells look.
XDG_CONFIG_HOME ?= $(HOME)/.config
XDG_DATA_HOME   ?= $(HOME)/.local/share
USER_MODE_VARS = PREFIX=$(HOME)/.local SYSTEMDUSERUNITDIR=$(XDG_CONFIG_HOME)/systemd/user \
	DBUSSERVICEDIR=$(XDG_DATA_HOME)/dbus-1/services DATADIR=$(XDG_DATA_HOME) \
	BASHCOMPDIR=$(XDG_DATA_HOME)/bash-completion/completions

BINARIES = qiblad qiblactl
INSTALL  ?= install
MSGFMT   ?= msgfmt
# qiblactl's catalogues (po/: its words for people; gettext domain qiblactl).
LINGUAS  = $(shell sed -e 's/\#.*//' po/LINGUAS)

.PHONY: all build check install install-user install-common install-system uninstall uninstall-user uninstall-common uninstall-system app install-app uninstall-app
all: build

# The whole test suite (README's test command): debian/ against the Makefiles (a second, no
# build), the daemon's package, then the app's, whose tests run the qiblad and qibla-sim the
# second step built (.build/debug) on a headless X server.
check:
	sh packaging/check-debian.sh
	$(SWIFT) test
	$(SWIFT) test --package-path clients/qibla-compass
build:
	$(SWIFT) build -c release --product qiblad
	$(SWIFT) build -c release --product qiblactl

# Qibla Compass, the GTK 4 app: a package and Makefile of its own (clients/qibla-compass) that
# install the binary, desktop entry, metainfo, icons and translations. make app before install-app.
app:
	$(MAKE) -C clients/qibla-compass build SWIFT=$(SWIFT)
install-app:
	$(MAKE) -C clients/qibla-compass install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
uninstall-app:
	$(MAKE) -C clients/qibla-compass uninstall PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)

# Paths inside installed units and activation files follow BINDIR.
define substitute
	sed -e 's|/usr/bin/qiblad|$(BINDIR)/qiblad|g' -e 's|/usr/bin/qiblactl|$(BINDIR)/qiblactl|g' $(1) > $(2)
endef

install: install-common install-system
install-user:
	$(MAKE) install-common $(USER_MODE_VARS)
	@echo "Installed for $(USER). Next: systemctl --user daemon-reload && systemctl --user enable --now qiblad"

install-common:
	@for b in $(BINARIES); do test -x $(BUILDDIR)/$$b || { echo "no $(BUILDDIR)/$$b: run make (swift build -c release) first" >&2; exit 1; }; done
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SYSTEMDUSERUNITDIR) $(DESTDIR)$(DBUSSERVICEDIR) \
		$(DESTDIR)$(DBUSINTERFACEDIR) $(DESTDIR)$(DOCDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	$(INSTALL) -m 755 $(addprefix $(BUILDDIR)/,$(BINARIES)) $(DESTDIR)$(BINDIR)/
	$(call substitute,systemd/qiblad.service,$(DESTDIR)$(SYSTEMDUSERUNITDIR)/qiblad.service)
	$(call substitute,dbus/io.github.qiblad.Qibla1.service,$(DESTDIR)$(DBUSSERVICEDIR)/io.github.qiblad.Qibla1.service)
	$(call substitute,systemd/qibla-remind.service,$(DESTDIR)$(SYSTEMDUSERUNITDIR)/qibla-remind.service)
	chmod 644 $(DESTDIR)$(SYSTEMDUSERUNITDIR)/qiblad.service $(DESTDIR)$(SYSTEMDUSERUNITDIR)/qibla-remind.service \
		$(DESTDIR)$(DBUSSERVICEDIR)/io.github.qiblad.Qibla1.service
	$(INSTALL) -m 644 dbus/io.github.qiblad.Qibla1.xml $(DESTDIR)$(DBUSINTERFACEDIR)/
	$(INSTALL) -m 644 systemd/qiblad.conf $(DESTDIR)$(DOCDIR)/qiblad.conf
	$(INSTALL) -m 644 man/qiblactl.1 $(DESTDIR)$(MANDIR)/man1/
	$(INSTALL) -m 644 man/qiblad.conf.5 $(DESTDIR)$(MANDIR)/man5/
	$(INSTALL) -m 644 man/qiblad.8 $(DESTDIR)$(MANDIR)/man8/
	$(BUILDDIR)/qiblactl --generate-completion-script bash > $(DESTDIR)$(BASHCOMPDIR)/qiblactl
	$(BUILDDIR)/qiblactl --generate-completion-script zsh > $(DESTDIR)$(ZSHCOMPDIR)/_qiblactl
	$(BUILDDIR)/qiblactl --generate-completion-script fish > $(DESTDIR)$(FISHCOMPDIR)/qiblactl.fish
	$(BUILDDIR)/qiblad --generate-completion-script bash > $(DESTDIR)$(BASHCOMPDIR)/qiblad
	$(BUILDDIR)/qiblad --generate-completion-script zsh > $(DESTDIR)$(ZSHCOMPDIR)/_qiblad
	$(BUILDDIR)/qiblad --generate-completion-script fish > $(DESTDIR)$(FISHCOMPDIR)/qiblad.fish
	for l in $(LINGUAS); do \
		$(INSTALL) -d $(DESTDIR)$(LOCALEDIR)/$$l/LC_MESSAGES && \
		$(MSGFMT) --check -o $(DESTDIR)$(LOCALEDIR)/$$l/LC_MESSAGES/qiblactl.mo po/$$l.po || exit 1; \
	done

# The system service, its bus policy and activation file, the qiblad user, the udev rule for buffered IIO.
install-system:
	$(INSTALL) -d $(DESTDIR)$(SYSTEMDSYSTEMUNITDIR) $(DESTDIR)$(DBUSSYSTEMSERVICEDIR) $(DESTDIR)$(DBUSPOLICYDIR) \
		$(DESTDIR)$(POLKITRULESDIR) $(DESTDIR)$(UDEVRULESDIR) $(DESTDIR)$(SYSUSERSDIR)
	$(call substitute,systemd/system/qiblad.service,$(DESTDIR)$(SYSTEMDSYSTEMUNITDIR)/qiblad.service)
	$(call substitute,dbus/system-services/io.github.qiblad.Qibla1.service,$(DESTDIR)$(DBUSSYSTEMSERVICEDIR)/io.github.qiblad.Qibla1.service)
	chmod 644 $(DESTDIR)$(SYSTEMDSYSTEMUNITDIR)/qiblad.service $(DESTDIR)$(DBUSSYSTEMSERVICEDIR)/io.github.qiblad.Qibla1.service
	$(INSTALL) -m 644 dbus/io.github.qiblad.Qibla1.conf $(DESTDIR)$(DBUSPOLICYDIR)/
	$(INSTALL) -m 644 dbus/qiblad-iio-sensor-proxy.conf $(DESTDIR)$(DBUSPOLICYDIR)/
	$(INSTALL) -m 644 polkit/qiblad-iio-sensor-proxy.rules $(DESTDIR)$(POLKITRULESDIR)/
	$(INSTALL) -m 644 systemd/70-qiblad-iio.rules $(DESTDIR)$(UDEVRULESDIR)/
	$(INSTALL) -m 644 systemd/qiblad.sysusers $(DESTDIR)$(SYSUSERSDIR)/qiblad.conf

INSTALLED_COMMON = $(addprefix $(BINDIR)/,$(BINARIES)) $(SYSTEMDUSERUNITDIR)/qiblad.service $(SYSTEMDUSERUNITDIR)/qibla-remind.service \
	$(DBUSSERVICEDIR)/io.github.qiblad.Qibla1.service $(DBUSINTERFACEDIR)/io.github.qiblad.Qibla1.xml \
	$(DOCDIR)/qiblad.conf $(MANDIR)/man1/qiblactl.1 $(MANDIR)/man5/qiblad.conf.5 $(MANDIR)/man8/qiblad.8 \
	$(BASHCOMPDIR)/qiblactl $(BASHCOMPDIR)/qiblad $(ZSHCOMPDIR)/_qiblactl $(ZSHCOMPDIR)/_qiblad \
	$(FISHCOMPDIR)/qiblactl.fish $(FISHCOMPDIR)/qiblad.fish \
	$(foreach l,$(LINGUAS),$(LOCALEDIR)/$(l)/LC_MESSAGES/qiblactl.mo)
INSTALLED_SYSTEM = $(SYSTEMDSYSTEMUNITDIR)/qiblad.service $(DBUSSYSTEMSERVICEDIR)/io.github.qiblad.Qibla1.service \
	$(DBUSPOLICYDIR)/io.github.qiblad.Qibla1.conf $(DBUSPOLICYDIR)/qiblad-iio-sensor-proxy.conf \
	$(POLKITRULESDIR)/qiblad-iio-sensor-proxy.rules \
	$(UDEVRULESDIR)/70-qiblad-iio.rules $(SYSUSERSDIR)/qiblad.conf

uninstall: uninstall-common uninstall-system
uninstall-user:
	$(MAKE) uninstall-common $(USER_MODE_VARS)
uninstall-common:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED_COMMON))
	-rmdir $(DESTDIR)$(DOCDIR) 2>/dev/null
uninstall-system:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED_SYSTEM))
