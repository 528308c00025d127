# The two commands of the README. Everything else is meson.
BUILDDIR ?= _build
MESON_SETUP_ARGS ?=

.PHONY: run test deps build demo clean

run: build
	./build-aux/demo.sh $(BUILDDIR)

test: build
	./build-aux/run-tests.sh $(BUILDDIR)

deps:
	./build-aux/install-deps.sh

build: deps
	@if [ ! -f $(BUILDDIR)/build.ninja ]; then meson setup $(BUILDDIR) $(MESON_SETUP_ARGS); fi
	meson compile -C $(BUILDDIR)

clean:
	rm -rf $(BUILDDIR)
