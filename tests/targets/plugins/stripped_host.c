/* Calls the stripped library's ABBA (stripped_constructor.c). */
#include <stdio.h>

void stripped_abba(void);

int main(void)
{
	stripped_abba();
	puts("done");
	return 0;
}
