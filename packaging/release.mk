# SPDX-License-Identifier: GPL-2.0-only
# Release artifacts, included by the top-level Makefile:
#
#   make dist      $(OUTPUT)/tracetools-VERSION.tar.gz: the source of HEAD
#                  (git archive), whose packaging/archive-version git fills
#                  in, which a build outside git takes its version from
#                  (packaging/version.sh), as it does from any git archive
#   make release   $(OUTPUT)/tracetools-VERSION-ARCH.tar.gz: the static,
#                  stripped tools, their man pages, shell completions,
#                  LICENSE and SHA256SUMS, for copying onto a host
#
# Both are byte-for-byte reproducible: sorted names, owner 0, fixed modes,
# every timestamp SOURCE_DATE_EPOCH (default: the commit's time, from git or
# in an exported tree from packaging/archive-version: version.sh --date).

STRIP ?= strip
# As uname -m names it (x86_64, aarch64): the machine the compiler builds for.
RELEASE_ARCH := $(firstword $(subst -, ,$(shell $(CC) -dumpmachine)))
RELEASE_NAME := tracetools-$(VERSION)-$(RELEASE_ARCH)
RELEASE_DIR := $(OUTPUT)/release/$(RELEASE_NAME)
RELEASE_TAR := $(OUTPUT)/$(RELEASE_NAME).tar.gz
DIST_TAR := $(OUTPUT)/tracetools-$(VERSION).tar.gz

# The shell completions, once a rule makes them in $(OUTPUT)/completion:
# set this to that rule's target (RELEASE_COMPLETIONS := completions, in
# the Makefile above the include of this file) and the release carries
# its bash/, zsh/ and fish/ in completion/.
RELEASE_COMPLETIONS ?=

RELEASE_EPOCH = $(or $(SOURCE_DATE_EPOCH),$(shell packaging/version.sh --date 2>/dev/null))
REPRO_TAR = tar --sort=name --mtime=@$(RELEASE_EPOCH) --owner=0 --group=0 --numeric-owner \
	--format=gnu

.PHONY: dist release

ifneq ($(filter release,$(MAKECMDGOALS)),)
ifneq ($(STATIC),1)
$(error make release ships static binaries: not with STATIC=$(STATIC))
endif
ifneq ($(APP_PREFIX),)
$(error make release ships the tools under their own names: not with APP_PREFIX=$(APP_PREFIX))
endif
endif

dist: | $(OUTPUT)
	$(call msg,DIST,$(DIST_TAR))
	$(Q)[ "$$(git rev-parse --show-toplevel 2>/dev/null)" -ef . ] || { echo "make dist:" \
		"not the top of a git checkout: git archive has no commit to take" >&2; exit 1; }
	$(Q)[ -z "$$(git status --porcelain --untracked-files=no)" ] || { echo "make dist:" \
		"uncommitted changes; git archive takes HEAD: commit them first" >&2; exit 1; }
	$(Q)set -o pipefail; git -c tar.umask=022 archive --format=tar --prefix=tracetools-$(VERSION)/ \
		HEAD | gzip -9n > $(DIST_TAR).tmp
	$(Q)mv $(DIST_TAR).tmp $(DIST_TAR)

release: $(BINS) $(RELEASE_COMPLETIONS)
	$(call msg,RELEASE,$(RELEASE_TAR))
	$(Q)rm -rf $(OUTPUT)/release
	$(Q)install -d -m 0755 $(RELEASE_DIR) $(RELEASE_DIR)/man $(RELEASE_DIR)/man/man8
	$(Q)for t in $(TOOLS); do \
		$(STRIP) -o $(RELEASE_DIR)/$$t $(OUTPUT)/$$t && chmod 0755 $(RELEASE_DIR)/$$t || exit 1; \
	done
	$(Q)install -m 0644 $(TOOLS:%=man/%.8) $(RELEASE_DIR)/man/man8/
	$(Q)install -m 0644 LICENSE $(RELEASE_DIR)/
ifneq ($(RELEASE_COMPLETIONS),)
	$(Q)install -d -m 0755 $(RELEASE_DIR)/completion $(RELEASE_DIR)/completion/bash $(RELEASE_DIR)/completion/zsh \
		$(RELEASE_DIR)/completion/fish
	$(Q)for t in $(TOOLS); do \
		install -m 0644 $(OUTPUT)/completion/bash/$$t $(RELEASE_DIR)/completion/bash/ && \
		install -m 0644 $(OUTPUT)/completion/zsh/_$$t $(RELEASE_DIR)/completion/zsh/ && \
		install -m 0644 $(OUTPUT)/completion/fish/$$t.fish $(RELEASE_DIR)/completion/fish/ || exit 1; \
	done
endif
	$(Q)[ -n "$(RELEASE_EPOCH)" ] || { echo "make release: no date for the files: set SOURCE_DATE_EPOCH" >&2; exit 1; }
	$(Q)set -o pipefail; cd $(RELEASE_DIR) && find . -type f ! -name SHA256SUMS | LC_ALL=C sort | \
		sed 's|^\./||' | xargs sha256sum > SHA256SUMS && chmod 0644 SHA256SUMS
	$(Q)set -o pipefail; $(REPRO_TAR) -C $(OUTPUT)/release -cf - $(RELEASE_NAME) | gzip -9n > $(RELEASE_TAR).tmp
	$(Q)mv $(RELEASE_TAR).tmp $(RELEASE_TAR)
