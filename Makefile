# SPDX-License-Identifier: GPL-2.0
#
# tiertrain top-level build. `make help` lists the targets.

# KERNEL=6.1|6.12|debug builds against that kernel of scripts/kernel;
# without it, the running kernel's tree or linux-headers-amd64's (scripts/kdir).
KERNEL ?=
KDIR ?= $(shell $(CURDIR)/scripts/kdir $(if $(KERNEL),--kernel $(KERNEL)) 2>/dev/null)
PREFIX ?= /usr/local
DESTDIR ?=
V ?= 0
# The one version number: kmod/version.h's TT_VERSION (the module's
# MODULE_VERSION and netlink TT_A_VERSION). libtiertrain, dkms.conf and
# the Debian packages take it from there.
VERSION := $(shell sed -n 's/^\#define[[:space:]]*TT_VERSION[[:space:]]*"\(.*\)"/\1/p' $(CURDIR)/kmod/version.h)

SUBDIRS_USER := lib ctl

.PHONY: all module user lib ctl python selftests bench bench-build deps check \
	demo lint install clean help kselftest-headers kdir-check fuzz fuzz-host \
	dkms-source dkms-install dkms-remove deb

all: module user

help:
	@echo "make            build the module, libtiertrain and tierctl"
	@echo "make deps       install the Debian packages everything needs (idempotent)"
	@echo "make check      run every test suite (unit tests on the host, selftests in the VM)"
	@echo "make demo       the demo: tiering in the VM, printing what moved and when and each goal met or missed"
	@echo "                (slow tier: emulated NVDIMM at RAM speed; DEMO_TOPOLOGY=cxl for emulated CXL)"
	@echo "make bench      benchmarks (VM), tables and JSON under build/bench/"
	@echo "make fuzz SECONDS=N [KERNEL=6.1|6.12|debug] [FUZZ_ARGS=...]"
	@echo "                the ABI fuzzer (selftests/tt_fuzz) in the VM for N seconds"
	@echo "make lint       sparse and checkpatch on kmod/ and core/"
	@echo "make fuzz-host SECONDS=N  libFuzzer (ASan+UBSan) harnesses of the pure-C cores, N s each (host)"
	@echo "make install    install module, library, header, tierctl, udev rule, Python package"
	@echo "make dkms-install  the module's source under /usr/src/tiertrain-$(VERSION), built and"
	@echo "                installed by DKMS for every kernel with headers (DKMS_KERNELS=...)"
	@echo "make dkms-remove   remove it from DKMS, every kernel, and /usr/src"
	@echo "make deb        the Debian packages, into build/deb/ (Documentation/packaging.md)"
	@echo "make clean      remove build products (the kernels cached by scripts/kernel stay)"
	@echo "KERNEL=6.1|6.12|debug  build the module against that kernel (scripts/kernel)"
	@echo "KDIR=$(KDIR)"

kdir-check:
	@test -n "$(KDIR)" || { echo "make: no kernel build tree found; run 'make deps' (installs linux-headers-amd64)$(if $(KERNEL), or scripts/kernel --kernel $(KERNEL) fetch,) or set KDIR=" >&2; exit 1; }

module: kdir-check
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules W=1

user: lib ctl python

lib:
	$(MAKE) -C lib

# the Python package's generated tiertrain/_uapi.py (lib/python/Makefile)
python: lib
	$(MAKE) -C lib/python

ctl: lib
	$(MAKE) -C ctl

# the tests run ctl/tierctl (control_test, tiers_test) and the kernel's ynl
# CLI (control_test's ynl_cli)
selftests: lib ctl build/kselftest/.stamp build/ynl/.stamp
	$(MAKE) -C selftests

# The ABI fuzzer in the guest (selftests/README): N seconds (default 60) on
# the kernel KERNEL (default 6.1), on run-vm's numa topology; scripts/vmrun
# fails the run on any kernel report. FUZZ_ARGS go to tt_fuzz (--seed,
# --avoid, ...). The guest gets 420 s beyond N (boot, the workers' 60 s to
# die, kmemleak on debug): a module that locks up every CPU ends there.
# SECONDS, when given (make fuzz SECONDS=N), for both fuzz targets.
FUZZ_SECS := $(if $(filter command line environment,$(origin SECONDS)),$(SECONDS))
FUZZ_ARGS ?=
fuzz: selftests
	scripts/vmrun --kernel $(or $(KERNEL),6.1) --timeout $$(($(or $(FUZZ_SECS),60) + 420)) \
		--numa 2G:0-1 --numa 2G --numa 256M --numa 0 -- \
		$(CURDIR)/selftests/tt_fuzz --seconds $(or $(FUZZ_SECS),60) $(FUZZ_ARGS)

bench-build: lib
	$(MAKE) -C bench

bench: deps all bench-build
	bench/run-migrate
	bench/run-movecost
	bench/run-train
	bench/run-events
	bench/run-torch

# The kselftest harness comes from Debian's linux-source-6.1, extracted at
# build time (never copied into this repository).
kselftest-headers: build/kselftest/.stamp
build/kselftest/.stamp:
	scripts/linux-source-files --flat build/kselftest \
		tools/testing/selftests/kselftest.h \
		tools/testing/selftests/kselftest_harness.h
	touch $@

# The kernel's ynl CLI and its netlink schemas from Debian's
# linux-source-6.12 (Documentation/netlink.md), extracted at build time.
build/ynl/.stamp:
	scripts/linux-source-files --version 6.12 build/ynl \
		tools/net/ynl/cli.py tools/net/ynl/lib Documentation/netlink/genetlink-legacy.yaml
	touch $@

build/lint/.stamp:
	scripts/linux-source-files build/lint \
		scripts/checkpatch.pl scripts/spelling.txt scripts/const_structs.checkpatch
	touch $@

deps:
	@scripts/deps

check: deps
	@scripts/check

# The libFuzzer harnesses of core/'s pure C (event, policy, timeline,
# heat, hint), on the host: each runs SECONDS (default 20) seconds;
# core/tests/fuzz/README.
fuzz-host:
	core/tests/fuzz/run --seconds $(or $(FUZZ_SECS),20)

demo: deps all
	@scripts/demo $(DEMO_ARGS)

lint: kdir-check build/lint/.stamp
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules W=1 C=2 CHECK="sparse -Wno-decl" 2>&1 | tee build/lint/sparse.log
	@! grep -E 'warning|error' build/lint/sparse.log
	perl build/lint/scripts/checkpatch.pl --no-tree --strict --show-types \
		--ignore FILE_PATH_CHANGES \
		-f $(filter-out %.mod.c,$(wildcard kmod/*.c)) $(filter-out kmod/compat.h,$(wildcard kmod/*.h)) \
		$(wildcard core/*.c core/*.h)
	# an out-of-tree module's compat header tests LINUX_VERSION_CODE: that
	# is its purpose (and KERNEL_VERSION() reads best on the right)
	perl build/lint/scripts/checkpatch.pl --no-tree --strict --show-types \
		--ignore FILE_PATH_CHANGES,LINUX_VERSION_CODE,CONSTANT_COMPARISON -f kmod/compat.h
	# uapi cannot use the kernel-internal BIT() macro
	perl build/lint/scripts/checkpatch.pl --no-tree --strict --show-types \
		--ignore FILE_PATH_CHANGES,BIT_MACRO -f uapi/linux/tiertrain.h

# DESTDIR stages everything (module under $(DESTDIR)/lib/modules) for
# packaging; without it the module is installed for the kernel KDIR belongs
# to, the "tiertrain" group is created and udev reloaded.
install: all
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules_install INSTALL_MOD_DIR=extra \
		$(if $(DESTDIR),INSTALL_MOD_PATH=$(DESTDIR)) \
		$(if $(wildcard $(KDIR)/output/signing_key.pem),,CONFIG_MODULE_SIG_ALL=)
	depmod $(if $(DESTDIR),-b $(DESTDIR) 2>/dev/null) $(shell scripts/kdir --release)
	$(MAKE) -C lib install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	$(MAKE) -C lib/python install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	$(MAKE) -C ctl install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	install -D -m 0644 uapi/linux/tiertrain.h $(DESTDIR)$(PREFIX)/include/linux/tiertrain.h
	install -D -m 0644 scripts/99-tiertrain.rules $(DESTDIR)/etc/udev/rules.d/99-tiertrain.rules
	$(if $(DESTDIR),,getent group tiertrain >/dev/null || groupadd --system tiertrain)
	$(if $(DESTDIR),,-udevadm control --reload-rules 2>/dev/null)

# ---- DKMS and the Debian packages (Documentation/packaging.md) ------------
# The module's source as DKMS builds it: the files the top-level Kbuild
# compiles (kmod/Kbuild: kmod/ and core/'s pure C), the ABI header.
DKMS_FILES = Kbuild kmod/Kbuild \
	$(filter-out %.mod.c,$(wildcard kmod/*.c)) $(wildcard kmod/*.h) \
	$(wildcard core/*.c core/*.h) uapi/linux/tiertrain.h
DKMS_SRC = /usr/src/tiertrain-$(VERSION)
# dkms-install builds for these kernels: default, every installed kernel
# with a build tree that dkms.conf's BUILD_EXCLUSIVE_KERNEL accepts.
DKMS_KERNELS ?= $(shell ls /lib/modules 2>/dev/null | grep -E '^6\.(1|12)\.' | \
	while read -r k; do [ -f "/lib/modules/$$k/build/Makefile" ] && echo "$$k"; done)

# the source tree DKMS builds from, into $(DKMS_DESTDIR) (the Debian
# package's; dh_dkms adds its dkms.conf)
DKMS_DESTDIR ?= $(DESTDIR)$(DKMS_SRC)
dkms-source:
	@test -n "$(VERSION)" || { echo "make: no TT_VERSION in kmod/version.h" >&2; exit 1; }
	for f in $(DKMS_FILES); do install -D -m 0644 "$$f" "$(DKMS_DESTDIR)/$$f" || exit 1; done

# dkms add, build, install: DKMS then rebuilds the module whenever a kernel
# is installed (AUTOINSTALL). Replaces an earlier dkms-install of VERSION.
dkms-install:
	-dkms remove tiertrain/$(VERSION) --all 2>/dev/null
	rm -rf $(DKMS_SRC)
	$(MAKE) dkms-source DESTDIR=
	sed 's/\#MODULE_VERSION\#/$(VERSION)/' dkms.conf > $(DKMS_SRC)/dkms.conf
	dkms add tiertrain/$(VERSION)
	for k in $(DKMS_KERNELS); do dkms install tiertrain/$(VERSION) -k "$$k" || exit 1; done

dkms-remove:
	-dkms remove tiertrain/$(VERSION) --all
	rm -rf $(DKMS_SRC)

# The Debian packages (debian/), built from a copy of the tree (the files
# git knows, or everything but build/ outside a git checkout) in
# build/deb/src: the checkout stays clean. debian/changelog is written
# there from VERSION. Then lintian (debian/*.lintian-overrides hold the
# justified exceptions) on the result.
DEB_SRC = build/deb/src/tiertrain-$(VERSION)
deb:
	@test -n "$(VERSION)" || { echo "make: no TT_VERSION in kmod/version.h" >&2; exit 1; }
	rm -rf build/deb
	mkdir -p $(DEB_SRC)
	if git rev-parse --show-toplevel >/dev/null 2>&1; then \
		git ls-files -z --cached --others --exclude-standard | \
			perl -0 -ne 'chomp; print "$$_\0" if -e' | \
			tar --null -T - -cf - | tar -C $(DEB_SRC) -xf -; \
	else \
		tar --exclude=./build --exclude=./.git -cf - . | tar -C $(DEB_SRC) -xf -; \
	fi
	scripts/deb-changelog $(VERSION) > $(DEB_SRC)/debian/changelog
	cd $(DEB_SRC) && dpkg-buildpackage -b -us -uc
	mv build/deb/src/*.deb build/deb/src/*.buildinfo build/deb/src/*.changes build/deb/
	lintian --fail-on error,warning --info build/deb/*.changes
	@ls -l build/deb/*.deb

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	-for d in lib lib/python ctl selftests bench core/tests core/tests/fuzz; do [ -f $$d/Makefile ] && $(MAKE) -C $$d clean; done
	rm -rf build/deb build/kselftest build/lint build/bench build/tmp build/vm build/mod build/fuzz-host
