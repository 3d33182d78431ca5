/** The method both sides of the `guarded` workload serve. */
export function quote(params: { sku: string; qty: number }) {
  const unit = params.sku.length * 1.25;
  return { sku: params.sku, qty: params.qty, unit, total: unit * params.qty, currency: 'EUR' };
}
