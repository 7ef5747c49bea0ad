// The `tilefuse` command. (Subcommands are being written.)
int main() { return 0; }
