/**
 * CloudFormation's condition functions (Fn::Equals, Fn::Not, Fn::And, Fn::Or, Condition) evaluated over a
 * synthesized template in a given Region, as CloudFormation would at deployment: what a template test needs to say
 * which resources exist in which Region. Anything else in a condition is an error, never a silent false.
 */
export function conditionHolds(conditions: Record<string, unknown>, name: string, pseudo: { region: string }): boolean {
  const evaluate = (expression: unknown): unknown => {
    if (typeof expression === 'string' || typeof expression === 'boolean') return expression;
    const [[fn, args]] = Object.entries(expression as Record<string, unknown>) as [[string, unknown]];
    const list = args as unknown[];
    switch (fn) {
      case 'Ref':
        if (args === 'AWS::Region') return pseudo.region;
        throw new Error(`Ref ${String(args)} is not evaluated here`);
      case 'Condition':
        return conditionHolds(conditions, args as string, pseudo);
      case 'Fn::Equals':
        return evaluate(list[0]) === evaluate(list[1]);
      case 'Fn::Not':
        return !evaluate(list[0]);
      case 'Fn::And':
        return list.every((item) => evaluate(item) === true);
      case 'Fn::Or':
        return list.some((item) => evaluate(item) === true);
      default:
        throw new Error(`${fn} is not evaluated here`);
    }
  };
  if (!(name in conditions)) throw new Error(`The template has no condition ${name}`);
  return evaluate(conditions[name]) === true;
}
