/*
 * Preloaded before libfaketime into a redis-server on a test's fake clock (FakeClockRedisServer.cs).
 * Debian's redis-server links the system libjemalloc.so.2, and jemalloc's initialization calls clock_gettime, which
 * libfaketime intercepts and which allocates: the server hangs before it listens (libfaketime#130). So every jemalloc
 * symbol redis-server imports (nm -D) goes to glibc's allocator instead: the allocation functions, the usable size of a
 * block, and the introspection calls answered as "not available".
 */
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *block, size_t size);
extern void __libc_free(void *block);
extern void *__libc_memalign(size_t alignment, size_t size);

void *malloc(size_t size) { return __libc_malloc(size); }
void *calloc(size_t count, size_t size) { return __libc_calloc(count, size); }
void *realloc(void *block, size_t size) { return __libc_realloc(block, size); }
void free(void *block) { __libc_free(block); }

/* Not imported by redis-server, but jemalloc exports them: a library's aligned block must come from the allocator that frees it. */
void *memalign(size_t alignment, size_t size) { return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { return __libc_memalign(alignment, size); }
int posix_memalign(void **block, size_t alignment, size_t size)
{
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0)
    {
        return EINVAL;
    }

    *block = __libc_memalign(alignment, size);
    return *block == NULL && size != 0 ? ENOMEM : 0;
}

/* glibc exports no __libc_ name for it: look up libc's own (already loaded, so RTLD_NOLOAD). */
static size_t (*libc_usable_size)(void *);

size_t malloc_usable_size(void *block)
{
    if (libc_usable_size == NULL)
    {
        void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
        libc_usable_size = (size_t (*)(void *))dlsym(libc, "malloc_usable_size");
    }

    return libc_usable_size(block);
}

/* jemalloc's size-class rounding: exact sizes are what glibc gives. */
size_t nallocx(size_t size, int flags) { (void)flags; return size; }

/* jemalloc's statistics and tuning (INFO memory, MEMORY DOCTOR, defragmentation): reported as absent. */
int mallctl(const char *name, void *old, size_t *oldLength, void *value, size_t length)
{
    (void)name; (void)old; (void)oldLength; (void)value; (void)length;
    return ENOENT;
}

void malloc_stats_print(void (*write)(void *, const char *), void *state, const char *options)
{
    (void)write; (void)state; (void)options;
}
