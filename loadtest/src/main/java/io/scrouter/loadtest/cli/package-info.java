/**
 * What the loadtest commands share on the command line: seed lists, range checks that name the option and what
 * it accepts, scenario overrides, and the command as typed for a report. The commands themselves live next to
 * the tools they run; {@link io.scrouter.loadtest.LoadtestCommand} puts them together.
 */
package io.scrouter.loadtest.cli;
