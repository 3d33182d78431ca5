/** The longest delay a Node timer honours (2^31 - 1 ms); a longer one fires after 1 ms. */
export const MAX_TIMER_DELAY_MS = 2_147_483_647;
