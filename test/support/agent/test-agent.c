/*
 * A stand-in for the node agent, compiled at test time so the real-systemd suite runs a real ELF.
 *   <agent> version      prints "test-agent version <AGENT_VERSION>"
 *   <agent> recover ...  (only when built with UPGRADER_SCRIPT) runs the upgrader's recover, as a
 *                        self-hosted agent that embeds the upgrader would
 *   <agent> anything     runs as a daemon until SIGTERM; built with CRASH_AFTER_SECONDS=0 it
 *                        exits 1 at once (crash on start), with N > 0 it exits 1 after N s
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef AGENT_VERSION
#define AGENT_VERSION "0.0.0"
#endif

static volatile sig_atomic_t stopping = 0;

static void on_term(int signal_number) {
  (void)signal_number;
  stopping = 1;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "version") == 0) {
    printf("test-agent version %s\n", AGENT_VERSION);
    return 0;
  }
#ifdef UPGRADER_SCRIPT
  if (argc > 1 && strcmp(argv[1], "recover") == 0) {
    char *args[64];
    int count = 0;
    args[count++] = UPGRADER_NODE;
    args[count++] = UPGRADER_SCRIPT;
    for (int index = 1; index < argc && count < 63; index++) args[count++] = argv[index];
    args[count] = NULL;
    execv(UPGRADER_NODE, args);
    perror("execv upgrader");
    return 127;
  }
#endif
  signal(SIGTERM, on_term);
#ifdef CRASH_AFTER_SECONDS
  if (CRASH_AFTER_SECONDS == 0) {
    fprintf(stderr, "test-agent %s: crashing on start\n", AGENT_VERSION);
    return 1;
  }
  for (int elapsed = 0; elapsed < CRASH_AFTER_SECONDS * 10 && !stopping; elapsed++) usleep(100000);
  if (!stopping) {
    fprintf(stderr, "test-agent %s: crashing after %d s\n", AGENT_VERSION, CRASH_AFTER_SECONDS);
    return 1;
  }
  return 0;
#else
  while (!stopping) pause();
  return 0;
#endif
}
