# SPDX-License-Identifier: GPL-2.0-only
# make deb: the Debian package, built from packaging/debian (kept out of
# debian/, which a distribution's own packaging takes) in a clean copy
# of the tree under $(DEB_BUILDDIR), so that nothing already built here
# (build/, a static build) gets into it. The .deb, its dbgsym, .buildinfo
# and .changes land in $(DEB_BUILDDIR). The tree's own files: git's list
# where this is a checkout's top (not a tarball unpacked inside another
# repository, whose list would be empty), else all but $(OUTPUT).
DEB_BUILDDIR ?= $(OUTPUT)/deb
# The package's version is its changelog's (the tools' --version too:
# packaging/debian/rules), whatever git describe says of the tree.
DEB_VERSION = $(shell dpkg-parsechangelog -l packaging/debian/changelog -S Version 2>/dev/null)
DEB_SRCDIR = $(DEB_BUILDDIR)/tracetools-$(DEB_VERSION)

# The tree's files, NUL-separated, as the package takes them; the sum of
# their modes and contents as they were copied, kept beside the package
# (tree.sha256), says whether a package made earlier is this tree's
# (make repro-test).
DEB_FILES = if [ "$$(git rev-parse --show-toplevel 2>/dev/null)" -ef . ]; then git ls-files -z; \
	else find . -path ./$(OUTPUT) -prune -o -type f -print0; fi
DEB_TREE_SUM = { $(DEB_FILES); } | LC_ALL=C sort -z | \
	xargs -0 sh -c 'stat -c "%a %n" "$$@" && sha256sum "$$@"' sh | sha256sum

.PHONY: deb
deb:
	$(Q)[ -n "$(DEB_VERSION)" ] || { echo "make deb: no version in packaging/debian/changelog (apt-get install dpkg-dev)" >&2; exit 1; }
	$(call msg,DEB,$(DEB_BUILDDIR))
	$(Q)rm -rf $(DEB_BUILDDIR) && mkdir -p $(DEB_SRCDIR)
	$(Q)set -o pipefail; $(DEB_TREE_SUM) > $(DEB_BUILDDIR)/tree.sha256.tmp
	$(Q)set -o pipefail; { $(DEB_FILES); } | tar --null -T - -cf - | tar -xf - -C $(DEB_SRCDIR)
	$(Q)[ -f $(DEB_SRCDIR)/Makefile ] || { echo "make deb: the copy of the tree in $(DEB_SRCDIR) has no Makefile" >&2; exit 1; }
	$(Q)rm -rf $(DEB_SRCDIR)/debian && cp -R packaging/debian $(DEB_SRCDIR)/debian
	$(Q)cd $(DEB_SRCDIR) && dpkg-buildpackage -us -uc -b -jauto
	$(Q)mv $(DEB_BUILDDIR)/tree.sha256.tmp $(DEB_BUILDDIR)/tree.sha256	# the tree as it was copied
