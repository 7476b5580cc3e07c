// CMicroHTTPD: Debian's libmicrohttpd (libmicrohttpd-dev). Swift cannot call variadic C functions, so the one
// variadic call the wrapper needs, MHD_start_daemon, goes through wearhouse_mhd_start with its options as an array.
#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>

/// MHD_start_daemon with every option in `options` (ended by MHD_OPTION_END), passed as MHD_OPTION_ARRAY.
static inline struct MHD_Daemon *wearhouse_mhd_start(unsigned int flags, uint16_t port,
                                                     MHD_AccessHandlerCallback handler, void *handler_context,
                                                     struct MHD_OptionItem *options) {
    return MHD_start_daemon(flags, port, NULL, NULL, handler, handler_context, MHD_OPTION_ARRAY, options,
                            MHD_OPTION_END);
}

/// The MHD_OPTION_NOTIFY_COMPLETED item: its callback goes in the item's integer field, which Swift cannot cast a
/// function pointer to.
static inline struct MHD_OptionItem wearhouse_mhd_completed_option(MHD_RequestCompletedCallback callback,
                                                                    void *context) {
    struct MHD_OptionItem item = {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)callback, context};
    return item;
}
