/* A shared object that check-front-core.sh installs as libfeaccel-core.so.0
 * beside a copy of the front: it loads, but has none of the core's public
 * functions (a core from another version, or another library by that name). */
int fea_fake_core_marker(void);

int fea_fake_core_marker(void) { return 1; }
