# SPDX-License-Identifier: GPL-2.0-only
# Shell completion (bash, zsh, fish) for each tool, made at build time
# from the option tables the tool parses with: the built tool prints them
# (--completion-table, common/completion.c), completion/generate writes
# each shell's script. A new option or value word is in the completion
# with nothing written twice.
#
# Why the tool itself prints its tables, not a generator of its own: the
# table is what cli_parse() really assembles (the shared groups a tool
# takes, the order, hidden options left out), from the same objects.
# The cost is running the built binary on the build host. A cross build
# (make ARCH=arm64) runs it under an emulator, COMPLETION_RUN (the
# Makefile's default qemu-aarch64-static; the binary is static), or takes
# the tables of a native build of the same tree,
# COMPLETION_TABLES=build/completion: they name options and words,
# nothing of the architecture.

APP_PREFIX ?=
COMPLETION_RUN ?=
COMPLETION_TABLES ?= $(OUTPUT)/completion

# Where each shell looks under PREFIX: for /usr (a package) Debian's
# directories, for /usr/local the ones each shell also searches there
# (nothing under /usr/share, which is the packages').
comp_dir = $(or $(shell pkg-config --define-variable=datadir=$(PREFIX)/share \
	--variable=completionsdir $(1) 2>/dev/null),$(PREFIX)/share/$(2))
BASHCOMPDIR ?= $(call comp_dir,bash-completion,bash-completion/completions)
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/$(if $(filter /usr,$(PREFIX)),vendor-completions,site-functions)
FISHCOMPDIR ?= $(call comp_dir,fish,fish/vendor_completions.d)

COMPLETIONS := $(TOOLS:%=$(OUTPUT)/completion/bash/$(APP_PREFIX)%) \
	$(TOOLS:%=$(OUTPUT)/completion/zsh/_$(APP_PREFIX)%) \
	$(TOOLS:%=$(OUTPUT)/completion/fish/$(APP_PREFIX)%.fish)

.PHONY: completions install-completion uninstall-completion uninstall

all: completions
bats-test: completions
completions: $(COMPLETIONS)

$(OUTPUT)/completion $(OUTPUT)/completion/bash $(OUTPUT)/completion/zsh $(OUTPUT)/completion/fish:
	$(Q)mkdir -p $@

ifeq ($(COMPLETION_TABLES),$(OUTPUT)/completion)
$(OUTPUT)/completion/%.table: $(OUTPUT)/% | $(OUTPUT)/completion
	$(call msg,TABLE,$@)
	$(Q)$(COMPLETION_RUN) $< --completion-table > $@
endif

$(OUTPUT)/completion/bash/$(APP_PREFIX)%: $(COMPLETION_TABLES)/%.table completion/generate \
		| $(OUTPUT)/completion/bash
	$(call msg,GEN,$@)
	$(Q)completion/generate bash $(APP_PREFIX)$* < $< > $@

$(OUTPUT)/completion/zsh/_$(APP_PREFIX)%: $(COMPLETION_TABLES)/%.table completion/generate \
		| $(OUTPUT)/completion/zsh
	$(call msg,GEN,$@)
	$(Q)completion/generate zsh $(APP_PREFIX)$* < $< > $@

$(OUTPUT)/completion/fish/$(APP_PREFIX)%.fish: $(COMPLETION_TABLES)/%.table completion/generate \
		| $(OUTPUT)/completion/fish
	$(call msg,GEN,$@)
	$(Q)completion/generate fish $(APP_PREFIX)$* < $< > $@

install: install-completion

install-completion: completions
	$(Q)install -d $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	$(Q)install -m 0644 $(filter $(OUTPUT)/completion/bash/%,$(COMPLETIONS)) $(DESTDIR)$(BASHCOMPDIR)/
	$(Q)install -m 0644 $(filter $(OUTPUT)/completion/zsh/%,$(COMPLETIONS)) $(DESTDIR)$(ZSHCOMPDIR)/
	$(Q)install -m 0644 $(filter $(OUTPUT)/completion/fish/%,$(COMPLETIONS)) $(DESTDIR)$(FISHCOMPDIR)/

uninstall: uninstall-completion

uninstall-completion:
	$(Q)rm -f $(TOOLS:%=$(DESTDIR)$(BASHCOMPDIR)/$(APP_PREFIX)%) \
		$(TOOLS:%=$(DESTDIR)$(ZSHCOMPDIR)/_$(APP_PREFIX)%) \
		$(TOOLS:%=$(DESTDIR)$(FISHCOMPDIR)/$(APP_PREFIX)%.fish)
