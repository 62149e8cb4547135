// Pact's core reports usage to the internet unless told not to; these tests stay on this machine.
process.env.PACT_DO_NOT_TRACK = 'true';
