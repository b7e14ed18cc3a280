#!/usr/bin/env node
// Launcher for the built CLI: the bin exists before the first build, so package managers can link it.
import '../dist/cli.js'
