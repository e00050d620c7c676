// cxx_accounts.cc - a C++ program whose locks and frames have mangled
// symbols: two classes of one namespace, each with a pthread mutex made in
// its constructor. "bug-abba" nests them in both orders (a report whose
// classes and frames must read as C++ names, not "_ZN..."), "ok" in one.
#include <pthread.h>
#include <stdio.h>
#include <string.h>

namespace shop {

class Ledger {
public:
	__attribute__((noinline)) Ledger() { pthread_mutex_init(&lock_, nullptr); }
	__attribute__((noinline)) void post(class Account &a);
	pthread_mutex_t lock_;
};

class Account {
public:
	__attribute__((noinline)) Account() { pthread_mutex_init(&lock_, nullptr); }
	__attribute__((noinline)) void audit(Ledger &l)
	{
		pthread_mutex_lock(&lock_);
		pthread_mutex_lock(&l.lock_);
		pthread_mutex_unlock(&l.lock_);
		pthread_mutex_unlock(&lock_);
	}
	pthread_mutex_t lock_;
};

void Ledger::post(Account &a)
{
	pthread_mutex_lock(&lock_);
	pthread_mutex_lock(&a.lock_);
	pthread_mutex_unlock(&a.lock_);
	pthread_mutex_unlock(&lock_);
}

} // namespace shop

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	// on the heap: locks on their maker's stack are not followed
	shop::Account *account = new shop::Account;
	shop::Ledger *ledger = new shop::Ledger;
	ledger->post(*account);
	if (!strcmp(argv[1], "bug-abba"))
		account->audit(*ledger);
	else if (strcmp(argv[1], "ok"))
		return 2;
	printf("done\n");
	return 0;
}
